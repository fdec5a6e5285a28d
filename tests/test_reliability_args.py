"""Argument handling: the scene found wherever it stands, options that would be ignored refused (exit 2,
naming the option), --quiet on every command, one number parser and one wording for its errors."""

from pathlib import Path

import pytest
from streams import Terminal

import main
from sim.cmdline import progress, resources


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
@pytest.mark.parametrize(
    "argv, scene",
    [
        (["run", "--headless", "--steps", "2", "heat"], "heat"),
        (["run", "--steps", "2", "--headless", "particles"], "particles"),
        (["run", "--headless", "--steps", "2", "--preset", "dli", "heat"], "heat"),
        (["run", "heat", "--headless", "--steps", "2", "--preset", "dli"], "heat"),
    ],
)
def test_run_finds_the_scene_after_its_options(capsys, argv, scene):
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    assert f"{scene} preset" in out and "2 steps" in out


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "--k", "3", "--headless", "--steps", "2", "heat"],
        ["run", "--headless", "--k", "3", "--steps", "2", "heat"],
    ],
)
def test_a_scene_option_before_the_scene_name_is_the_scene_s(capsys, argv):
    err = refused(capsys, *argv)
    assert "--k applies to the heat scene's GPU kernels" in err


def test_bench_finds_its_scene_after_its_options(capsys):
    code, out, err = run(capsys, "bench", "--steps", "5", "heat")
    assert code == 1 and "the heat benchmark times GPU kernels" in err
    code, out, err = run(capsys, "bench", "--steps", "3", "--warmup", "1", "--precision", "fp32", "particles")
    assert code == 2 and "--precision applies to the particles scene's GPU kernels" in err


@pytest.mark.parametrize(
    "argv, option",
    [
        (["bench", "--steps", "5", "sdh"], "--steps 5"),
        (["bench", "--warmup", "0", "durbin"], "--warmup 0"),
        (["bench", "--preset", "seed", "heat"], "--preset seed"),
        (["bench", "--variant", "all", "heat"], "--variant all"),
        (["bench", "--quiet", "--variant=all", "heat"], "--variant=all"),
    ],
)
def test_an_option_the_scene_s_own_bench_lacks_is_named_wherever_the_scene_stands(capsys, argv, option):
    """The scene's own bench parses (not balls'), and says which option it does not take."""
    err = usage_error(capsys, *argv)
    assert f"error: unrecognized arguments: {option}\n" in err and "Traceback" not in err
    assert main.placed(argv)[0] == argv[-1]


def test_help_after_an_option_the_scene_lacks_is_the_scene_s(capsys):
    with pytest.raises(SystemExit):
        main.main(["bench", "--steps", "5", "sdh", "--help"])
    assert "--width WIDTH" in capsys.readouterr().out


def test_help_after_the_scene_lists_the_scene_s_options(capsys):
    with pytest.raises(SystemExit):
        main.main(["run", "--headless", "heat", "--help"])
    assert "--k K" in capsys.readouterr().out


# --- run: options that shape an output no one asked for --------------------------------------------
@pytest.mark.parametrize(
    "extra, named",
    [
        (["--fps", "30"], "--fps applies to a recording"),
        (["--record-every", "3"], "--record-every applies to a recording"),
        (["--fps", "24", "--record-every", "3"], "--fps and --record-every apply to a recording"),
        (["--size", "640x480"], "--size sets the picture or video of a headless run"),
    ],
)
def test_run_refuses_output_options_without_the_output(capsys, extra, named):
    err = refused(capsys, "run", "balls", "--preset", "T", "--headless", "--steps", "2", *extra)
    assert named in err and err.count("\n") == 1


# --- --quiet on every command that docs/reliability.md promises it for ------------------------------
@pytest.mark.parametrize(
    "argv",
    [
        ["particles", "-n", "40", "--steps", "20"],
        ["sdh", "200", "500"],
    ],
)
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


@pytest.mark.parametrize(
    "argv",
    [
        ["heat", "--ni", "8", "--nj", "8", "--steps", "2"],
        ["durbin", "8"],
    ],
)
def test_every_course_command_accepts_quiet(capsys, argv):
    code, out, err = run(capsys, *argv, "--quiet")
    assert code == 0, err
    assert not progress.shown(Terminal())  # a terminal, yet no bar: --quiet reached the progress module


# --- GPU options on a CPU benchmark, values checked before looking for a GPU ---------------------------
@pytest.mark.parametrize(
    "extra, named",
    [
        (["--kernel", "fast"], "--kernel applies to the GPU kernels"),
        (["--block", "64"], "--block applies to the GPU kernels"),
        (["--kernel", "fast", "--block", "64"], "--kernel and --block apply to the GPU kernels"),
        (
            ["--baseline", str(Path(__file__).resolve().parent.parent / "bench" / "results" / "h100-sdh-c1220c0.json")],
            "--baseline applies to the GPU kernels",
        ),
    ],
)
def test_bench_sdh_on_the_cpu_refuses_gpu_options(capsys, extra, named):
    err = refused(capsys, "bench", "sdh", "--backend", "cpu", "--sizes", "300", *extra)
    assert named in err


@pytest.mark.parametrize(
    "argv, message",
    [
        (["bench", "durbin", "--block", "33"], "--block must be a multiple of 32 in 32..1024, got 33"),
        (["bench", "durbin", "--block", "32x8"], "--block must be a multiple of 32 in 32..1024, got 32x8"),
        (["bench", "durbin", "--kernel", "bogus"], "unknown kernel 'bogus'"),
        (["bench", "sdh", "--block", "2000"], "block size must be 1..1024, got 2000"),
        (["bench", "sdh", "--kernel", "bogus"], "unknown kernel 'bogus'"),
        (["bench", "heat", "--block", "64x32"], "block 64x32 has 2048 threads: at most 1024"),
    ],
)
def test_gpu_benchmarks_name_a_bad_value_before_saying_there_is_no_gpu(capsys, argv, message):
    assert message in refused(capsys, *argv)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["bench", "durbin", "--sizes", "1"], "argument --sizes: N must be at least 2, got 1"),
        (["bench", "sdh", "--sizes", "1"], "atoms must be at least 2, got 1"),
        (["bench", "--sizes", "1", "sdh"], "atoms must be at least 2, got 1"),
        (["sdh", "1", "500"], "argument N: atoms must be at least 2, got 1"),
    ],
)
def test_sizes_too_small_are_refused_alike_by_the_command_and_its_benchmark(capsys, argv, message):
    assert message in usage_error(capsys, *argv)


def test_durbin_needs_two_like_its_benchmark(capsys):
    assert "N must be 2..2,147,483,647, got 1" in refused(capsys, "durbin", "1")


def test_run_sdh_needs_two_atoms_like_the_course_command(capsys):
    assert "atom count 1 out of range 2..100,000" in refused(
        capsys, "run", "sdh", "-n", "1", "--headless", "--steps", "1"
    )
    code, out, err = run(capsys, "run", "sdh", "-n", "2", "--headless", "--steps", "1")
    assert code == 0 and "pairs counted 1" in out


def test_durbin_refuses_an_empty_dataset_name(capsys):
    err = refused(capsys, "durbin", "--dataset", "")
    assert "unknown dataset ''" in err


def test_a_bad_transport_is_refused_whatever_the_command(capsys, monkeypatch):
    monkeypatch.setenv("KERNEL_LAB_TRANSPORT", "bogus")
    err = refused(capsys, "sdh", "10", "500")
    assert "KERNEL_LAB_TRANSPORT='bogus': choose from nccl, cuda-mpi, host" in err
    monkeypatch.setenv("KERNEL_LAB_TRANSPORT", "host")
    assert run(capsys, "sdh", "10", "500")[0] == 0


# --- one number parser, one wording -------------------------------------------------------------------
@pytest.mark.parametrize(
    "argv, message",
    [
        (["run", "balls", "-n", "1e300", "--headless"], "balls: 1e+300 balls x 600 steps on the CPU needs about"),
        (["particles", "-n", "1e300"], "particles: 1e+300 particles x 1,000 steps"),
        (["durbin", "1e300"], "N must be 2..2,147,483,647, got 1e+300"),
        (["sdh", "1e300", "500"], "sdh: 1e+300 atoms (5e+599 pairs) on the CPU"),
        (["heat", "--ni", "1e300", "--nj", "1e300"], "a 1e+300x1e+300 grid x 200 steps on the CPU needs about"),
        (["lpc", "assets/sounds/vowels.wav", "--order", "1e300"], "(320 samples), got 1e+300"),
        (["lpc", "assets/sounds/vowels.wav", "--order", "1e300", "--backend", "gpu"], "up to 1024, got 1e+300"),
    ],
)
def test_huge_counts_are_printed_compactly(capsys, argv, message):
    err = refused(capsys, *argv)
    assert message in err and len(err) < 300


def test_counts_take_digit_groups_everywhere(capsys):
    for argv in (["particles", "-n", "1_000", "--steps", "2"], ["durbin", "1_000"], ["sdh", "1_000", "500"]):
        code, out, err = run(capsys, *argv)
        assert code == 0, err
    assert "n = 1000," in run(capsys, "particles", "-n", "1_000", "--steps", "2")[1]


def test_sizes_read_their_sides_like_counts(capsys):
    err = usage_error(capsys, "bench", "durbin", "--batch", "1e300x32")
    assert "argument --batch: --batch 1e+300x32 out of range 2..1,073,741,824" in err
    assert "--size 8x800 out of range 16..16,384" in usage_error(capsys, "run", "balls", "--size", "8x800")
    from sim.cmdline import cli

    assert cli.size("100kx32", 2, 1 << 30, "--batch") == (100_000, 32)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["bench", "balls", "--warmup", "-1"], "argument --warmup: value must be 0 or more, got -1"),
        (["heat", "--steps", "-1"], "argument --steps: steps must be 0 or more, got -1"),
        (["run", "balls", "--steps", "0"], "argument --steps: value must be positive, got 0"),
        (["heat", "--ni", "-4"], "argument --ni: ni must be at least 3, got -4"),
    ],
)
def test_a_negative_count_is_told_the_bound_that_applies(capsys, argv, message):
    assert message in usage_error(capsys, *argv)


@pytest.mark.parametrize(
    "argv, option",
    [
        (["bench", "balls", "--preset", "T,,t"], "--preset"),
        (["bench", "balls", "--sizes", "1000,"], "--sizes"),
        (["bench", "sdh", "--kernel", "fast,,tiled"], "--kernel"),
        (["sdh", "100", "500", "--backend", "gpu", "--kernel", "fast,"], "--kernel"),
    ],
)
def test_a_list_with_an_empty_entry_is_refused(capsys, argv, option):
    err = usage_error(capsys, *argv)
    assert f"argument {option}" in err or f"argument -n/--count/{option}" in err
    assert "empty entry in the comma-separated list" in err


@pytest.mark.parametrize(
    "argv, message",
    [
        (["sdh", "100", "nan"], "argument W: bucket width: expected a finite number, got 'nan'"),
        (["bench", "sdh", "--width", "inf"], "argument --width: bucket width: expected a finite number, got 'inf'"),
        (["heat", "--factor", "nan"], "argument --factor: factor: expected a finite number, got 'nan'"),
        (["lpc", "x.wav", "--frame-ms", "inf"], "argument --frame-ms: frame length: expected a finite number"),
        (["sdh", "100", "500", "0"], "argument BLOCK: block size must be positive, got 0"),
        (
            ["run", "balls", "--headless", "--record", "x.mp4", "--fps", "nan"],
            "argument --fps: frames per second: expected a finite number, got 'nan'",
        ),
    ],
)
def test_course_numbers_go_through_the_one_parser(capsys, argv, message):
    assert message in usage_error(capsys, *argv)


def test_the_checker_refuses_a_box_size_that_is_not_a_number(capsys, tmp_path):
    frame = "0.1 0.1\n0.2 0.2\n\n"
    a, b = tmp_path / "a.out", tmp_path / "b.out"
    a.write_text("2 nan\n" + frame)
    b.write_text("2 0.5\n" + frame)
    err = refused(capsys, "particles-check", str(a), str(b))
    assert "a.out:1: box size must be a positive number, got 'nan'" in err
    a.write_text("2 0.5\n" + frame)
    assert run(capsys, "particles-check", str(a), str(b))[0] == 0


# --- statistics switched off are not printed as values ---------------------------------------------------
def test_bench_particles_prints_no_placeholder_statistics(capsys):
    code, out, err = run(capsys, "bench", "particles", "--sizes", "400", "--steps", "10", "--warmup", "1")
    assert code == 0, err
    stats = next(line for line in out.splitlines() if line.strip().startswith("stats:"))
    assert "absmin" not in stats and "absavg" not in stats and "n 400" in stats


def test_run_particles_prints_the_measured_statistics(capsys):
    code, out, err = run(capsys, "run", "particles", "-n", "400", "--headless", "--steps", "10")
    assert code == 0, err
    assert "absmin -" not in out and "absavg -" not in out and "absmin " in out


@pytest.mark.parametrize(
    "argv",
    [
        ["bench", "--steps", "5", "sdh"],
        ["run", "--headless", "--k", "3", "--steps", "2", "heat"],
        ["view"],
        ["bench", "heat", "--kernel-file", "mine.cu"],
        ["run", "--steps", "2", "nope"],
        ["bench", "--help"],
    ],
)
def test_finding_the_scene_takes_two_look_ahead_parsers_at_most(monkeypatch, argv):
    from sim.cmdline import cli

    made = []
    start = cli.ProbeParser.__init__
    monkeypatch.setattr(cli.ProbeParser, "__init__", lambda self, *a, **k: made.append(1) or start(self, *a, **k))
    main.placed(argv)
    assert len(made) <= 2
