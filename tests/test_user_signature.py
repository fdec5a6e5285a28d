"""The entry kernel's parameters against the stage's signature, checked by NVRTC before anything runs (no GPU
needed): a kernel declaring another type or another number of parameters is refused, naming the parameter."""

from __future__ import annotations

import pytest

import main
from sim.gpu.cuda import source_path
from sim.registry import SCENES
from sim.userkernel import signature
from sim.userkernel import source as user_source

pytest.importorskip("cuda.bindings.nvrtc", reason="cuda-bindings is part of the [test] extra")

HEAT_STEP = source_path("sim/heat/templates/step.cu").read_text()
DECLARED_AT = 1 + HEAT_STEP.splitlines().index(next(ln for ln in HEAT_STEP.splitlines() if "void step(" in ln))


def errors(tmp_path, text: str, scene: str = "heat") -> list:
    path = tmp_path / "mine.cu"
    path.write_text(text)
    found = user_source.compile_check(user_source.load(path, SCENES[scene]))
    return [d for d in found if d.severity == "error"]


def test_the_stage_signatures_parse_into_every_parameter():
    stage = SCENES["heat"].user_stages[0]
    assert signature.parameters(stage) == [
        ("int", "ni"),
        ("int", "nj"),
        ("long long", "stride"),
        ("float", "tfac"),
        ("const float*", "tin"),
        ("float*", "tout"),
    ]
    for spec in SCENES.values():
        for stage in spec.user_stages:
            assert [name for _, name in signature.parameters(stage)] == [name for name, _ in stage.params]


def test_a_double_where_the_stage_passes_a_float_is_refused_at_the_kernels_line(tmp_path):
    found = errors(tmp_path, HEAT_STEP.replace("float tfac", "double tfac"))
    assert len(found) == 1
    assert found[0].line == DECLARED_AT and "void step(" in found[0].text
    assert found[0].message.startswith("parameter 4 of step, tfac: the stage passes float")


def test_a_pointer_to_another_type_is_refused(tmp_path):
    found = errors(tmp_path, HEAT_STEP.replace("const float* __restrict__ tin", "const double* __restrict__ tin"))
    assert [d.message.split(" (")[0] for d in found] == ["parameter 5 of step, tin: the stage passes const float*"]


def test_a_missing_parameter_is_refused_naming_the_count(tmp_path):
    text = HEAT_STEP.replace("float tfac,", "").replace("tfac", "0.1f")
    found = errors(tmp_path, text)
    assert [d.message for d in found] == [
        "step takes 6 parameters, as the stage passes them: "
        "(int ni, int nj, long long stride, float tfac, const float* tin, float* tout)"
    ]


@pytest.mark.parametrize(
    "old, new",
    [
        ("long long stride", "long stride"),  # the same 8 signed bytes
        ("const float* __restrict__ tin", "float* tin"),  # a target's const
        ("int ni", "const int ni"),
    ],
)  # a parameter's own const
def test_the_same_bytes_under_another_spelling_are_accepted(tmp_path, old, new):
    assert old in HEAT_STEP
    assert errors(tmp_path, HEAT_STEP.replace(old, new)) == []


def test_an_unsigned_integer_for_a_signed_one_is_refused(tmp_path):
    found = errors(tmp_path, HEAT_STEP.replace("long long stride", "unsigned long long stride"))
    assert [d.message.split(" (")[0] for d in found] == ["parameter 3 of step, stride: the stage passes long long"]


def test_a_missing_entry_is_said_once(tmp_path):
    found = errors(tmp_path, HEAT_STEP.replace("void step(", "void steps("))
    assert len(found) == 1 and found[0].message.startswith("no kernel named step")


def test_check_refuses_a_wrong_signature_before_running_with_exit_2(tmp_path, capsys):
    path = tmp_path / "double_tfac.cu"
    path.write_text(HEAT_STEP.replace("float tfac", "double tfac"))
    assert main.main(["check", "heat", "--kernel-file", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:{DECLARED_AT}: error: parameter 4 of step, tfac: the stage passes float" in err
    assert "nothing was run" in err
