"""Your own kernel in a stage (sim.userkernel): the file read as text and NVRTC's diagnostics with file:line,
on a plain scene of one stage. Its kernel file and the planted heat kernels (heat_source) serve the other
tests of a user's kernel too: guarded buffers and the sandbox worker in test_user_kernels_sandbox.py, the heat
step stage in test_user_kernels_heat.py, the commands in test_user_commands*.py. NVRTC compiles without a GPU."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim.cmdline.cli import UsageError
from sim.contract import SceneSpec, UserStage, Words
from sim.gpu.cuda import Build, source_path
from sim.heat import SPEC as HEAT
from sim.userkernel import source as user_source

pytest.importorskip("cuda.bindings.nvrtc", reason="cuda-bindings is part of the [test] extra")


class PlainStage:
    """The least an adapter needs for a compile check: the reference build whose options it shares."""

    reference = Build("sim/heat/stencil.cu", ("--fmad=false",))


PLAIN = UserStage(
    name="scale",
    summary="y = 2 x",
    entry="scale",
    signature="void scale(int n, float* y)",
    params=(("n", "items"), ("y", "values")),
    launch="one thread per item",
    compare="exact",
    template="",
    adapter="test_user_kernels:PlainStage",
)
PLAIN_SPEC = SceneSpec(
    name="plain",
    title="a test scene",
    words=Words("items", "item"),
    view="points",
    presets=(),
    default_preset="",
    scene="",
    stages=("scale",),
    stats=(),
    user_stages=(PLAIN,),
)
GOOD = (
    'extern "C" __global__ void scale(int n, float* y) {\n    int i = threadIdx.x;\n    if (i < n) y[i] *= 2.0f;\n}\n'
)


def kernel_file(tmp_path, text: str, name: str = "my_scale.cu"):
    path = tmp_path / name
    path.write_text(text)
    return user_source.load(path, PLAIN_SPEC)


KERNELS = Path(__file__).parent / "data" / "user_kernels"


def heat_source(name: str):
    """A planted heat kernel under tests/data/user_kernels, or the template itself ("template")."""
    path = source_path(HEAT.user_stage("step").template) if name == "template" else KERNELS / f"heat_{name}.cu"
    return user_source.load(path, HEAT, "step")


# --- the file and its diagnostics -------------------------------------------------------------------------
def test_a_good_file_compiles_without_diagnostics(tmp_path):
    source = kernel_file(tmp_path, GOOD)
    assert source.variant == "my_scale.cu"
    assert user_source.compile_check(source) == []


def test_a_syntax_error_names_file_line_and_the_offending_line(tmp_path):
    text = GOOD.replace("y[i] *= 2.0f;", "y[i] *= z;")
    source = kernel_file(tmp_path, text)
    found = user_source.compile_check(source)
    errors = [d for d in found if d.severity == "error"]
    assert len(errors) == 1
    error = errors[0]
    assert (error.file, error.line, error.text) == (str(source.path), 3, "if (i < n) y[i] *= z;")
    assert 'identifier "z" is undefined' in error.message
    assert str(error).startswith(f'{source.path}:3: error: identifier "z" is undefined\n    if (i < n)')


def test_a_warning_is_kept_as_a_warning(tmp_path):
    text = GOOD.replace("int i = threadIdx.x;", "int i = threadIdx.x;\n    int unused;")
    found = user_source.compile_check(kernel_file(tmp_path, text))
    assert [(d.severity, d.line, d.text) for d in found] == [("warning", 3, "int unused;")]
    assert 'variable "unused" was declared but never referenced' in found[0].message


def test_a_file_without_the_entry_kernel_is_an_error_naming_it(tmp_path):
    found = user_source.compile_check(kernel_file(tmp_path, GOOD.replace("void scale(", "void scaled(")))
    assert [d.severity for d in found] == ["error"]
    assert "no kernel named scale" in found[0].message and 'extern "C" __global__ void scale' in found[0].message


def test_a_kernel_without_extern_c_is_missing_too(tmp_path):
    found = user_source.compile_check(kernel_file(tmp_path, GOOD.replace('extern "C" ', "")))
    assert [d.severity for d in found] == ["error"] and "no kernel named scale" in found[0].message


def test_compiled_raises_with_every_diagnostic_or_hands_back_the_warnings(tmp_path):
    warned = kernel_file(tmp_path, GOOD.replace("int i = threadIdx.x;", "int i = threadIdx.x;\n    int unused;"))
    assert [d.severity for d in user_source.compiled(warned)] == ["warning"]
    broken = kernel_file(tmp_path, GOOD.replace("int unused;", "").replace("2.0f;", "z;"), "broken.cu")
    with pytest.raises(user_source.CompileFailed) as caught:
        user_source.compiled(broken)
    assert [d.line for d in caught.value.diagnostics] == [3]
    assert str(caught.value) == f'{broken.path}:3: error: identifier "z" is undefined'


def test_options_are_the_reference_builds_and_lineinfo(tmp_path):
    options = user_source.options(kernel_file(tmp_path, GOOD))
    assert options == (*PlainStage.reference.all_options(), "-lineinfo")


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda tmp: tmp / "absent.cu", "does not exist"),
        (lambda tmp: tmp, "a directory"),
        (lambda tmp: (tmp / "bin.cu").write_bytes(b"\x7fELF\0\0\x01") and tmp / "bin.cu", "not a text file"),
        (lambda tmp: (tmp / "latin.cu").write_bytes(b"// caf\xe9\n") and tmp / "latin.cu", "not UTF-8 text"),
        (lambda tmp: (tmp / "huge.cu").write_bytes(b"//" * user_source.MAX_BYTES) and tmp / "huge.cu", "larger than"),
    ],
)
def test_a_file_that_is_not_a_kernel_is_refused_in_one_line(tmp_path, make, words):
    with pytest.raises(UsageError) as caught:
        user_source.load(make(tmp_path), PLAIN_SPEC)
    assert words in str(caught.value) and "\n" not in str(caught.value)


def test_a_stage_the_scene_does_not_have_is_refused_naming_the_choices(tmp_path):
    (tmp_path / "k.cu").write_text(GOOD)
    with pytest.raises(UsageError, match="no replaceable stage 'forces' \\(choose from scale\\)"):
        user_source.load(tmp_path / "k.cu", PLAIN_SPEC, "forces")
