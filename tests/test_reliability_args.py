"""Argument handling: the scene found wherever it stands, options that would be ignored refused (exit 2,
naming the option), --quiet on every command, one number parser and one wording for its errors."""

import io

import pytest

import main
from sim import progress, resources


class Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.fixture(autouse=True)
def not_quiet():
    progress.set_quiet(False)
    yield
    progress.set_quiet(False)


def run(capsys, *argv):
    """(exit code, stdout, stderr) of main.main in this process."""
    code = main.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def usage_error(capsys, *argv) -> str:
    """stderr of a command refused with exit 2 (argparse's or the command's own)."""
    with pytest.raises(SystemExit) as refused:
        main.main(list(argv))
    err = capsys.readouterr().err
    assert refused.value.code == 2, err
    return err


def refused(capsys, *argv) -> str:
    code, out, err = run(capsys, *argv)
    assert code == 2, (out, err)
    assert out == ""
    return err


# --- the scene wherever it stands ----------------------------------------------------------------
@pytest.mark.parametrize("argv, scene", [
    (["run", "--headless", "--steps", "2", "heat"], "heat"),
    (["run", "--steps", "2", "--headless", "particles"], "particles"),
    (["run", "--headless", "--steps", "2", "--preset", "dli", "heat"], "heat"),
    (["run", "heat", "--headless", "--steps", "2", "--preset", "dli"], "heat"),
])
def test_run_finds_the_scene_after_its_options(capsys, argv, scene):
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    assert f"{scene} preset" in out and "2 steps" in out


@pytest.mark.parametrize("argv", [
    ["run", "--k", "3", "--headless", "--steps", "2", "heat"],
    ["run", "--headless", "--k", "3", "--steps", "2", "heat"],
])
def test_a_scene_option_before_the_scene_name_is_the_scene_s(capsys, argv):
    err = refused(capsys, *argv)
    assert "--k applies to the heat scene's GPU kernels" in err


def test_bench_finds_its_scene_after_its_options(capsys):
    code, out, err = run(capsys, "bench", "--steps", "5", "heat")
    assert code == 1 and "the heat benchmark times GPU kernels" in err
    code, out, err = run(capsys, "bench", "--steps", "3", "--warmup", "1", "--precision", "fp32", "particles")
    assert code == 2 and "--precision applies to the particles scene's GPU kernels" in err


def test_help_after_the_scene_lists_the_scene_s_options(capsys):
    with pytest.raises(SystemExit):
        main.main(["run", "--headless", "heat", "--help"])
    assert "--k K" in capsys.readouterr().out


# --- run: options that shape an output no one asked for --------------------------------------------
@pytest.mark.parametrize("extra, named", [
    (["--fps", "30"], "--fps applies to a recording"),
    (["--record-every", "3"], "--record-every applies to a recording"),
    (["--fps", "24", "--record-every", "3"], "--fps and --record-every apply to a recording"),
    (["--size", "640x480"], "--size sets the picture or video of a headless run"),
])
def test_run_refuses_output_options_without_the_output(capsys, extra, named):
    err = refused(capsys, "run", "balls", "--preset", "T", "--headless", "--steps", "2", *extra)
    assert named in err and err.count("\n") == 1


# --- --quiet on every command that the README promises it for ----------------------------------------
@pytest.mark.parametrize("argv", [
    ["particles", "-n", "40", "--steps", "20"],
    ["sdh", "200", "500"],
])
def test_course_commands_take_quiet_and_it_silences_their_bar(capsys, monkeypatch, argv):
    monkeypatch.setattr(resources, "NOTICE_SECONDS", 0.0)  # every run "long": a bar where one is shown
    shown = Terminal()
    monkeypatch.setattr("sys.stderr", shown)
    assert main.main(argv) == 0
    assert "%" in shown.getvalue()
    silent = Terminal()
    monkeypatch.setattr("sys.stderr", silent)
    assert main.main([*argv, "--quiet"]) == 0
    assert "%" not in silent.getvalue()
    capsys.readouterr()


@pytest.mark.parametrize("argv", [
    ["heat", "--ni", "8", "--nj", "8", "--steps", "2"],
    ["durbin", "8"],
])
def test_every_course_command_accepts_quiet(capsys, argv):
    code, out, err = run(capsys, *argv, "--quiet")
    assert code == 0, err
    assert progress.is_quiet()
