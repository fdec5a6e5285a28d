"""The user's entry kernel checked against the stage's C signature at compile time, so a kernel that would
launch with the wrong arguments (a ``double`` where the stage passes a ``float``, a parameter missing) is
refused before it runs, naming the parameter, with or without a GPU.

``check_text(stage)`` is C++ appended to the user's file: a ``static_assert`` per parameter on the entry's
``decltype``. A parameter matches when its type is the stage's, ignoring what a pointer's target is
qualified with (``float*`` for ``const float*`` is fine) and allowing another spelling of an integer of the
same size and sign (``long`` or ``int64_t`` for ``long long``: the same bytes are passed).
``diagnostic(message, source)`` turns the compiler's message about those lines into one about the user's
kernel, at the line that declares it.
"""

from __future__ import annotations

import re

from sim.contract import UserStage

FILE = "stage signature"  # the #line name of the appended check: its messages are recognised by it

_TRAITS = r"""
namespace kernel_lab_signature {
template <class A, class B> struct same { static constexpr bool value = false; };
template <class A> struct same<A, A> { static constexpr bool value = true; };
template <class T> struct sign { static constexpr int value = 0; };  // 1 signed, 2 unsigned integer
template <> struct sign<signed char> { static constexpr int value = 1; };
template <> struct sign<short> { static constexpr int value = 1; };
template <> struct sign<int> { static constexpr int value = 1; };
template <> struct sign<long> { static constexpr int value = 1; };
template <> struct sign<long long> { static constexpr int value = 1; };
template <> struct sign<unsigned char> { static constexpr int value = 2; };
template <> struct sign<unsigned short> { static constexpr int value = 2; };
template <> struct sign<unsigned int> { static constexpr int value = 2; };
template <> struct sign<unsigned long> { static constexpr int value = 2; };
template <> struct sign<unsigned long long> { static constexpr int value = 2; };
template <class T> struct bare { using type = T; };  // a pointer's target without const or volatile
template <class T> struct bare<T*> { using type = typename bare<T>::type*; };
template <class T> struct bare<const T> { using type = typename bare<T>::type; };
template <class T> struct bare<volatile T> { using type = typename bare<T>::type; };
template <class T> struct bare<const volatile T> { using type = typename bare<T>::type; };
template <class A, class B> struct fits {
  static constexpr bool value = same<A, B>::value || (sign<A>::value != 0 && sign<A>::value == sign<B>::value
                                                      && sizeof(A) == sizeof(B));
};
template <class A, class B> struct fits<A*, B*> { static constexpr bool value = fits<A, B>::value; };
template <class A, class B> struct matches {
  static constexpr bool value = fits<typename bare<A>::type, typename bare<B>::type>::value;
};
template <int I, class... P> struct nth { using type = void; };
template <class H, class... P> struct nth<0, H, P...> { using type = H; };
template <int I, class H, class... P> struct nth<I, H, P...> { using type = typename nth<I - 1, P...>::type; };
template <class F> struct args { static constexpr int count = -1; };
template <class... P> struct args<void(P...)> {
  static constexpr int count = sizeof...(P);
  template <int I> using at = typename nth<I, P...>::type;
};
"""

_ASSERT = re.compile(r'static assertion failed with "(?P<text>.*)"')


def parameters(stage: UserStage) -> list[tuple[str, str]]:
    """(C type, name) of each parameter of the stage's signature, in order."""
    inside = stage.signature[stage.signature.index("(") + 1 : stage.signature.rindex(")")]
    found = []
    for part in inside.split(","):
        match = re.fullmatch(r"\s*(?P<type>.*?[\s*&])(?P<name>\w+)\s*", part)
        if match is None:
            raise ValueError(f"no C type and name in parameter {part.strip()!r} of {stage.signature}")
        found.append((" ".join(match["type"].split()).replace(" *", "*"), match["name"]))
    return found


def check_text(stage: UserStage) -> str:
    """The C++ that refuses an entry kernel whose parameters differ from the stage's."""
    params = parameters(stage)
    listed = ", ".join(f"{t} {n}" for t, n in params)
    lines = [
        f'#line 1 "{FILE}"',
        _TRAITS,
        f"using entry = args<decltype({stage.entry})>;",
        f"static_assert(entry::count < 0 || entry::count == {len(params)}, "
        f'"{stage.entry} takes {len(params)} parameters, as the stage passes them: ({listed})");',
    ]
    for i, (ctype, name) in enumerate(params):
        lines.append(
            f"static_assert(entry::count != {len(params)} || matches<entry::at<{i}>, {ctype}>::value, "
            f'"parameter {i + 1} of {stage.entry}, {name}: the stage passes {ctype}");'
        )
    lines.append("}")
    return "\n".join(lines)


def entry_line(text: str, entry: str) -> int:
    """The line of the user's text that declares the entry kernel (1 when it cannot be found)."""
    match = re.search(rf"__global__[^;{{]*?\b{re.escape(entry)}\s*\(", text)
    return text.count("\n", 0, match.start(0) + match.group(0).rindex(entry)) + 1 if match else 1


def missing_entry(stage: UserStage) -> str:
    """What to say when the file defines no entry kernel."""
    return (
        f"no kernel named {stage.entry}: the {stage.name} stage needs "
        f'extern "C" __global__ void {stage.entry}(...) ({stage.signature})'
    )


def messages(compiler_messages: list[str], stage: UserStage) -> list[str]:
    """The user's words for the compiler's messages about the appended check: the entry missing, or each
    parameter that differs; the compiler's own words only when it said neither."""
    if any("is undefined" in m for m in compiler_messages):
        return [missing_entry(stage)]
    failed = [found["text"] for found in map(_ASSERT.search, compiler_messages) if found]
    if failed:
        return [text if text.startswith(stage.entry) else f"{text} ({stage.signature})" for text in failed]
    return [f"{stage.entry} does not match the stage's signature {stage.signature}: {m}" for m in compiler_messages[:1]]
