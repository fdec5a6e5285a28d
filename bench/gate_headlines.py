"""The regression gate's headline figures (bench/regress.py): each scene's gate runs (``SceneSpec.gate``) as the
figures the gate compares, where each is read in the reports, and the steps bench/regress.sh runs to make them."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass

from sim import registry  # the scenes' gate runs (regress.py puts the repository on the path)
from sim.contract import GateFigure, GateRun, SceneSpec, load

Record = dict


@dataclass(frozen=True)
class Headline:
    name: str
    workload: str  # the product's report file in OUT_DIR (<workload>.json) and its "workload" field
    pick: Callable[[Record], bool]
    ms: Callable[[Record], float]
    err: Callable[[Record], float | None]  # the figure's error, same unit (None: the record has none)
    peer_file: str | None = None
    peer_pick: Callable[[Record], bool] | None = None
    peer_ms: Callable[[Record], float] | None = None
    file: str | None = None  # the report's name in OUT_DIR (<file>.json, <file>-runN.json) where not <workload>


def is_record(**want) -> Callable[[Record], bool]:
    return lambda r: all(r.get(k) == v for k, v in want.items())


def _err(name: str, scale: float = 1.0) -> Callable[[Record], float | None]:
    """A record's ``<name>_err`` in the headline's unit (None where the record has none)."""
    return lambda r: None if r.get(f"{name}_err") is None else r[f"{name}_err"] * scale


def _value(name: str, scale: float = 1.0) -> Callable[[Record], float]:
    return (lambda r: r[name]) if scale == 1.0 else (lambda r: r[name] * scale)


def _pick(figure: GateFigure, spec: SceneSpec) -> Callable[[Record], bool]:
    """The records of the figure's configuration; an option a record does not name ran with its default (the
    records from before the scene had the option)."""
    fields, defaults = is_record(**dict(figure.record)), {o.name: o.default for o in spec.options}
    options = {name: (value, defaults[name]) for name, value in figure.options}
    if not options:
        return fields
    return lambda r: (
        fields(r)
        and all(r.get("options", {}).get(name, default) == value for name, (value, default) in options.items())
    )


def gate_runs() -> list[tuple[SceneSpec, GateRun]]:
    """Every scene's gate runs (``SceneSpec.gate``), the scenes in the registry's order."""
    return [(spec, run) for spec in registry.SCENES.values() if spec.gate for run in load(spec.gate)]


def _headlines() -> tuple[Headline, ...]:
    """The scenes' headline figures: the benches' first, then the frames'."""
    found: dict[bool, list[Headline]] = {False: [], True: []}
    for spec, run in gate_runs():
        for f in run.figures:
            peer = (
                {
                    "peer_file": f"peer-{spec.name}.json",
                    "peer_pick": is_record(**dict(f.peer)),
                    "peer_ms": _value(f.peer_value, f.scale),
                }
                if f.peer
                else {}
            )
            found[run.frame].append(
                Headline(
                    f.name,
                    "frame" if run.frame else spec.name,
                    _pick(f, spec),
                    _value(f.value, f.scale),
                    _err(f.value, f.scale),
                    **peer,
                    file=run.report or spec.name,
                )
            )
    return (*found[False], *found[True])


HEADLINES = _headlines()
FRAME_PROCESSES = 2  # a frame is mostly host work: its best of this many processes counts (``reports``)


def _shell(*words: str) -> str:
    return " ".join(shlex.quote(w) for w in words)


def commands() -> list[tuple[str, str]]:
    """The steps bench/regress.sh runs, (label, shell text with $py, $out and $peers left for the shell): each
    scene's bench and its peer, then the frames, each in ``FRAME_PROCESSES`` processes."""
    steps, frames = [], [(spec, run) for spec, run in gate_runs() if run.frame]
    for spec, run in gate_runs():
        if run.frame:
            continue
        steps.append(
            (
                run.label,
                f'$py main.py bench {_shell(spec.name, *run.args)} --json "$out/{run.report or spec.name}.json"',
            )
        )
        if run.peer:
            steps.append(
                (
                    run.peer.label,
                    f'$py bench/peer.py "$peers/{run.peer.script}" {_shell(*run.peer.args)} '
                    f'--json "$out/peer-{spec.name}.json"',
                )
            )
    for process in range(1, FRAME_PROCESSES + 1):
        suffix = "" if process == 1 else f"-run{process}"
        for spec, run in frames:
            steps.append(
                (
                    f"{run.label} (run {process})",
                    f"$py -m viewer.bench.frame {_shell(*run.args)} "
                    f'--json "$out/{run.report or spec.name}{suffix}.json"',
                )
            )
    return steps
