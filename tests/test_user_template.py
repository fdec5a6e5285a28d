"""``template``: a stage's commented start for your own kernel, written to a file or printed, for every stage
of every scene; the refusals that name what is wrong."""

from __future__ import annotations

import pytest

import main
from sim.gpu.cuda import source_path
from sim.registry import SCENES
from sim.userkernel import source as user_source

pytest.importorskip("cuda.bindings.nvrtc", reason="cuda-bindings is part of the [test] extra")


EVERY_STAGE = [(s.name, stage.name) for s in SCENES.values() for stage in s.user_stages]


@pytest.mark.parametrize("scene, stage", EVERY_STAGE, ids=[f"{a} {b}" for a, b in EVERY_STAGE])
def test_template_writes_a_file_that_compiles_for_every_stage(tmp_path, capsys, scene, stage):
    target = tmp_path / f"my_{stage}.cu"
    assert main.main(["template", scene, stage, "-o", str(target)]) == 0
    assert f"check {scene} --kernel-file {target}" in capsys.readouterr().err
    assert user_source.compile_check(user_source.load(target, SCENES[scene], stage)) == []


def test_template_prints_to_stdout_without_o(capsys):
    assert main.main(["template", "heat", "step"]) == 0
    assert capsys.readouterr().out == source_path("sim/heat/templates/step.cu").read_text()


def test_template_refuses_to_overwrite_unless_forced(tmp_path, capsys):
    target = tmp_path / "my_step.cu"
    target.write_text("// my work\n")
    assert main.main(["template", "heat", "-o", str(target)]) == 2
    assert f"'{target}' exists: not replaced (add --force to replace it)" in capsys.readouterr().err
    assert target.read_text() == "// my work\n"
    assert main.main(["template", "heat", "-o", str(target), "--force"]) == 0
    assert target.read_text().startswith("// One step of the heat stencil")


@pytest.mark.parametrize("kind", ["character device", "directory", "FIFO", "dangling link", "looping link"])
@pytest.mark.parametrize("force", [[], ["--force"]])
def test_template_says_at_once_why_a_target_cannot_be_written(tmp_path, capsys, kind, force):
    import os

    target = {"character device": "/dev/null", "directory": str(tmp_path)}.get(kind, str(tmp_path / "target"))
    if kind == "FIFO":
        os.mkfifo(target)
    elif kind.endswith("link"):
        os.symlink(target if kind == "looping link" else tmp_path / "nowhere", target)
    assert main.main(["template", "heat", "-o", target, *force]) == 2
    err = capsys.readouterr().err
    said = {"dangling link": "symbolic link (not followed)", "looping link": "symbolic link (not followed)"}
    assert f"template file {target!r} is a {said.get(kind, kind)}: not replaced" in err and "--force" not in err


def test_template_hints_and_header_name_the_file_written_quoted(tmp_path, capsys):
    target = tmp_path / "my kernels" / "hot step.cu"
    target.parent.mkdir()
    assert main.main(["template", "heat", "-o", str(target)]) == 0
    quoted = f"'{target}'"
    assert capsys.readouterr().err.splitlines()[1:] == [
        f"  python main.py check heat --kernel-file {quoted}",
        f"  python main.py view heat --kernel-file {quoted}",
    ]
    header = target.read_text().splitlines()[2:4]
    assert header[0].startswith(f"//   python main.py view heat --kernel-file {quoted}     the scene steps")
    assert header[1].startswith(f"//   python main.py check heat --kernel-file {quoted}    every size")
    assert "--kernel-file step.cu" not in "".join(header)
    template = source_path("sim/heat/templates/step.cu").read_text()
    assert len(target.read_text().splitlines()) == len(template.splitlines()), "the kernel's lines stay where they are"


@pytest.mark.parametrize(
    "argv, words",
    [
        (["template", "heat", "forces"], "the heat scene has no replaceable stage 'forces' (choose from step)"),
        (["template", "nowhere"], "unknown scene 'nowhere' (choose from"),
        (["template", "heat", "--force"], "--force replaces the file of -o"),
    ],
)
def test_template_refuses_an_unknown_stage_or_scene_naming_the_choices(capsys, argv, words):
    assert main.main(argv) == 2
    assert words in capsys.readouterr().err


def test_template_names_a_scene_without_stages_and_those_with(capsys):
    bare = next((name for name, s in SCENES.items() if not s.user_stages), None)
    if bare is None:
        pytest.skip("every scene has a replaceable stage")
    assert main.main(["template", bare]) == 2
    assert f"the {bare} scene has no stage your own kernel can replace (scenes with one: " in capsys.readouterr().err
