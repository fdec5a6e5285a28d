"""Long runs: every run, course command and benchmark estimates its time and memory before any work
(sim/cmdline/resources.py) and refuses what could not finish (more than a week) or cannot fit, exit 2 with
the estimate; a long run shows progress on a terminal."""

import io

import pytest
from streams import Terminal

import main
from sim.cmdline import progress, resources
from sim.registry import SCENES

WEEK = "past the 7 days a run may take"


@pytest.fixture(autouse=True)
def this_machine(monkeypatch):
    """The estimates of a 2-thread machine with room for anything: the refusals below are for time
    alone, whatever machine runs the tests (the memory tests set their own room)."""
    monkeypatch.setattr(resources, "cpu_threads", lambda: 2)
    monkeypatch.setattr(resources, "available_memory", lambda: 1 << 50)
    progress.set_quiet(False)
    yield
    progress.set_quiet(False)


@pytest.fixture
def room_16gb(monkeypatch):
    monkeypatch.setattr(resources, "available_memory", lambda: 16 * 10**9)


def run(capsys, *args):
    """(exit code, stdout, stderr) of ``main.py ARGS`` in this process."""
    try:
        code = main.main([str(a) for a in args])
    except SystemExit as exc:  # argparse's own errors
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


def refused(capsys, *args) -> str:
    """stderr of a command refused before any work: exit 2, one line, nothing on stdout."""
    code, out, err = run(capsys, *args)
    assert code == 2, err
    assert out == "" and err.count("\n") == 1 and "Traceback" not in err
    return err


# --- run SCENE --headless --steps N -----------------------------------------------------------------
@pytest.mark.parametrize("scene", list(SCENES))
def test_run_refuses_steps_that_could_not_finish_in_every_scene(capsys, scene):
    err = refused(capsys, "run", scene, "--headless", "--steps", "1e12")
    assert f"{scene}: " in err and "x 1,000,000,000,000 steps on the CPU would take about" in err and WEEK in err


@pytest.mark.parametrize("scene", list(SCENES))
def test_run_shows_its_steps_on_a_terminal_in_every_scene(capsys, monkeypatch, scene):
    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    assert main.main(["run", scene, "--headless", "--steps", "2"]) == 0
    assert f"\r{scene}:   0%" in terminal.getvalue() and "0/2" in terminal.getvalue()
    assert ": 2 steps" in capsys.readouterr().out


def test_run_refuses_an_astronomical_step_count(capsys):
    err = refused(capsys, "run", "heat", "--headless", "--steps", "1e300")
    assert "heat: 262,144 cells x 1e+300 steps on the CPU would take about 2.14e+288 years" in err


def test_run_counts_a_presets_items(capsys):
    err = refused(capsys, "run", "balls", "--headless", "--steps", "1e13", "--preset", "drip", "-n", "4000")
    assert "balls: 4,000 balls x 10,000,000,000,000 steps on the CPU would take about 159 years" in err


def test_a_finished_recursion_costs_only_its_steps():
    """Durbin's first N steps touch every entry, later ones nothing: 1e10 steps of N = 200,000 are hours,
    not the years 1e10 full steps would be."""
    spec = SCENES["durbin"]
    assert resources.scene_estimate(spec, 200_000, False, 10**10).seconds < 86400


def test_a_serial_cpu_step_is_not_sped_up_by_more_threads(monkeypatch):
    """Durbin's recursion runs on one thread whatever the machine has; the particles' steps use them all."""

    def seconds(name: str, threads: int) -> float:
        monkeypatch.setattr(resources, "cpu_threads", lambda: threads)
        return resources.scene_estimate(SCENES[name], 100_000, False, 1000).seconds

    assert seconds("durbin", 64) == seconds("durbin", 2)
    assert seconds("particles", 64) < seconds("particles", 2) / 10


def test_run_sdh_defaults_to_a_run_of_seconds(capsys):
    args = main.build_parser("sdh").parse_args(["run", "sdh", "--headless"])
    assert args.steps == SCENES["sdh"].run_steps == 10
    assert resources.scene_estimate(SCENES["sdh"], 10_000, False, args.steps).seconds < 2
    assert main.build_parser("balls").parse_args(["run", "balls"]).steps == 600  # the others keep 600
    code, out, err = run(capsys, "run", "sdh", "--headless")
    assert code == 0 and "sdh preset course on cpu: 10 steps" in out and err == ""


# --- course commands -------------------------------------------------------------------------------------
def test_heat_refuses_steps_that_could_not_finish(capsys):
    err = refused(capsys, "heat", "--ni", 3, "--nj", 3, "--steps", "1e15")
    assert "heat: a 3x3 grid x 1e+15 steps on the CPU would take about 63.4 years" in err and WEEK in err


def test_heat_refuses_them_on_the_gpu_too_before_asking_for_one(capsys):
    err = refused(capsys, "heat", "--ni", 3, "--nj", 3, "--steps", "1e15", "--backend", "gpu")
    assert "heat: a 3x3 grid x 1e+15 steps on the GPU would take about" in err


def test_heat_shows_progress_on_a_terminal_when_long(capsys, monkeypatch):
    monkeypatch.setattr(resources, "NOTICE_SECONDS", 0.0)  # every run counts as long
    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    assert main.main(["heat", "--ni", "40", "--nj", "40", "--steps", "3000"]) == 0
    shown = terminal.getvalue()
    assert "heat: a 40x40 grid x 3,000 steps on the CPU: about" in shown and "progress below" in shown
    assert "\rheat CPU:   0%" in shown and "0/3000" in shown


def test_heat_shows_no_progress_off_a_terminal(capsys, monkeypatch):
    monkeypatch.setattr(resources, "NOTICE_SECONDS", 0.0)
    code, out, err = run(capsys, "heat", "--ni", 40, "--nj", 40, "--steps", 300)
    assert code == 0 and "Elapsed CPU" in out
    assert "Ctrl-C stops it" in err and "progress below" not in err and "\r" not in err


def test_sdh_refuses_atoms_that_could_not_finish(capsys):
    err = refused(capsys, "sdh", "100000000", "500")
    assert "sdh: 100,000,000 atoms (5e+15 pairs) on the CPU would take about 96 days" in err


def test_particles_refuses_steps_that_could_not_finish(capsys):
    err = refused(capsys, "particles", "-n", "1e6", "--steps", "1e9")
    assert "particles: 1,000,000 particles x 1,000,000,000 steps on the CPU would take about" in err and WEEK in err


def test_durbin_refuses_a_size_that_could_not_finish(capsys):
    err = refused(capsys, "durbin", "5e7")
    assert "durbin: N = 50,000,000 on the CPU would take about 29 days" in err and WEEK in err


def test_durbin_shows_progress_on_a_terminal_when_long(capsys, monkeypatch):
    monkeypatch.setattr(resources, "NOTICE_SECONDS", 0.0)
    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    assert main.main(["durbin", "3000"]) == 0
    assert "durbin: N = 3,000 on the CPU: about" in terminal.getvalue() and "\rdurbin CPU:" in terminal.getvalue()
    assert "cpu time:" in capsys.readouterr().out


def test_particles_counts_what_a_step_costs_however_few_the_particles(capsys):
    err = refused(capsys, "particles", "-n", "2", "--steps", "1e12")
    assert "particles: 2 particles x 1,000,000,000,000 steps on the CPU would take about 28 days" in err


# --- bench --------------------------------------------------------------------------------------------------
def test_bench_refuses_steps_that_could_not_finish(capsys):
    err = refused(capsys, "bench", "balls", "--preset", "T", "--steps", "1e12")
    assert "balls: preset T x 1,000,000,000,014 steps on the CPU would take about 23 days" in err


def test_bench_refuses_the_configuration_that_could_not_finish_before_running_any(capsys):
    err = refused(capsys, "bench", "particles", "--sizes", "1000,1e6", "--steps", "1e7")
    assert "particles: 1,000,000 particles x 10,000,012 steps" in err and WEEK in err


def test_bench_refuses_configurations_that_together_could_not_finish(capsys):
    err = refused(capsys, "bench", "particles", "--sizes", "1e5,2e5,3e5,4e5", "--steps", "5e6")
    assert "bench particles: 4 configurations of 5,000,012 steps on the CPU would take about" in err


def test_bench_shows_its_warm_up_on_a_terminal(capsys, monkeypatch):
    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    assert main.main(["bench", "balls", "--preset", "T", "--steps", "12", "--warmup", "6"]) == 0
    shown = terminal.getvalue()
    assert "\rballs warm-up:   0%" in shown and "0/6" in shown and "\rballs timed frames:" in shown
    assert "preset T  n 1715" in capsys.readouterr().out


def test_bench_sdh_refuses_a_size_beyond_memory_before_allocating(capsys, room_16gb):
    for backend in ("cpu", "gpu"):
        err = refused(capsys, "bench", "sdh", "--backend", backend, "--sizes", "1e12")
        assert "bench sdh: 1,000,000,000,000 atoms (5e+23 pairs)" in err and "needs about 48 TB of memory" in err
        assert "this machine has 14.4 GB to spare" in err


def test_bench_sdh_refuses_sizes_that_could_not_finish(capsys):
    err = refused(capsys, "bench", "sdh", "--backend", "cpu", "--sizes", "5e8")
    assert "bench sdh: 500,000,000 atoms" in err and "on the CPU would take about" in err and WEEK in err
    err = refused(capsys, "bench", "sdh", "--sizes", "1000,1e8")
    assert "bench sdh: 100,000,000 atoms (5e+15 pairs) x 2 runs on the GPU would take" in err


def test_bench_sdh_on_the_cpu_shows_its_pairs_on_a_terminal(capsys, monkeypatch):
    """The bar moves within a histogram (rank 0's pairs), not once a whole run."""
    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    assert main.main(["bench", "sdh", "--backend", "cpu", "--sizes", "3000"]) == 0
    assert "\rscaling runs (rank 0's pairs):   0%" in terminal.getvalue() and "/13.5M" in terminal.getvalue()
    assert "strong scaling, n = 3,000" in capsys.readouterr().out


def test_bench_heat_refuses_grids_and_steps_beyond_reach(capsys, room_16gb):
    err = refused(capsys, "bench", "heat", "--sizes", "100,1e6")
    assert "bench heat: a 1,000,000x1,000,000 grid x 500 steps x 8 runs on the GPU needs about 16 TB" in err
    err = refused(capsys, "bench", "heat", "--steps", "1e12")
    assert "bench heat: a 10,000x10,000 grid x 1,000,000,000,000 steps x 8 runs" in err and WEEK in err


def test_bench_durbin_refuses_sizes_and_batches_beyond_reach(capsys, room_16gb):
    err = refused(capsys, "bench", "durbin", "--sizes", "1e12")
    assert "bench durbin: N = 1,000,000,000,000 x 6 runs on the GPU needs about 96 TB of memory" in err
    err = refused(capsys, "bench", "durbin", "--batch", "1000000x100000")
    assert "bench durbin: a batch of 1,000,000 systems of order 100,000 needs about 9.6 TB" in err
    err = refused(capsys, "bench", "durbin", "--sizes", "1e8")
    assert "bench durbin: N = 100,000,000 x 6 runs on the GPU would take about" in err and WEEK in err


def test_the_mpi_scaling_tables_refuse_runs_that_could_not_finish():
    """mpiexec -n 4 ... bench particles: every rank count's runs, checked on every rank before any runs."""
    from sim.cmdline.requests import BenchRequest, frozen_mapping
    from sim.particles import ranks_bench

    def request(steps: int) -> BenchRequest:
        return BenchRequest(
            "particles", "cpu", None, None, None, None, None, frozen_mapping({"precision": None}), steps, 12, None, None
        )

    long = request(3 * 10**7)  # each run alone within a week, not all of them
    with pytest.raises(resources.UsageError, match="bench particles: 5 sizes over 4 ranks would take about"):
        ranks_bench.check_particles(long, SCENES["particles"], [10_000, 20_000], [1, 2, 4], False, 1)
    ranks_bench.check_particles(request(100), SCENES["particles"], [10_000], [1, 2], False, 1)


# --- the shared mechanism -----------------------------------------------------------------------------
@pytest.mark.parametrize("spec", list(SCENES.values()), ids=list(SCENES))
def test_every_scene_declares_its_pace(spec):
    assert spec.pace[0] > 0 and spec.pace[1] > 0 and spec.step_work in ("items", "pairs", "recursion")
    assert spec.run_steps >= 1


def test_the_time_limit_is_a_week():
    resources.check(resources.Estimate("fine", seconds=resources.TIME_LIMIT_SECONDS), stream=io.StringIO())
    with pytest.raises(resources.UsageError, match="x: a while would take about 7.1 days on this machine, past the 7"):
        resources.check(resources.Estimate("x: a while", seconds=resources.TIME_LIMIT_SECONDS * 1.01))
    with pytest.raises(resources.UsageError, match="forever"):
        resources.check(resources.Estimate("x", seconds=float("inf")))


def test_a_long_run_says_progress_below_only_where_a_bar_is_drawn():
    pipe, terminal = io.StringIO(), Terminal()
    resources.check(resources.Estimate("x", seconds=60), stream=pipe)
    resources.check(resources.Estimate("x", seconds=60), stream=terminal)
    assert pipe.getvalue() == "x: about 1 min on this machine; Ctrl-C stops it\n"
    assert terminal.getvalue() == "x: about 1 min on this machine; progress below, Ctrl-C stops it\n"
