"""The durbin scene's benchmark cases: the regression gate's headlines (bench/regress.py) and the
recursion's Nsight Compute cases (bench/ncu_models.py): one system of 200,000 on the persistent kernel,
and 100,000 systems of order 32 on the batched register kernel."""

from sim.contract import GateFigure, GatePeer, GateRun, NcuCase

N = 200_000
SYSTEMS, ORDER = 100_000, 32

GATE = (
    GateRun(
        "durbin 200000 and 100000x32",
        ("--sizes", str(N), "--kernel", "persistent-grid", "--batch", f"{SYSTEMS}x{ORDER}"),
        (
            GateFigure(
                "durbin 200000 persistent-grid, us/step",
                "us_per_step",
                (("kind", "single"), ("backend", "gpu"), ("n", N), ("method", "persistent-grid"), ("block", 256)),
                peer=(("n", N), ("method", "two-kernel")),
                peer_value="us_per_step",
            ),
            GateFigure(
                "durbin 100000x32 batched-register, ms",
                "s",
                (
                    ("kind", "batch"),
                    ("backend", "gpu"),
                    ("systems", SYSTEMS),
                    ("order", ORDER),
                    ("method", "batched-register"),
                    ("block", 128),
                ),
                scale=1e3,
                peer=(("batch", SYSTEMS), ("order", ORDER), ("method", "cupy-vectorised")),
                peer_value="s",
            ),
        ),
        peer=GatePeer("peer durbin", "peer_durbin.py", ("--sizes", str(N), "--scipy-max", "0")),
    ),
)

NCU = (
    # the scene adds the recursion's time itself (no stage timer to hook): a whole frame of 1000 steps
    NcuCase(
        "recursion", "large", N, "persistent", 256, steps=1000, window=1000, params=(("speed", 1000),), whole_frame=True
    ),
    NcuCase("recursion", name="batched", profile="sim.durbin.bench_cases:profile_batched"),
)


def profile_batched(profiled):
    """One call of the batched register kernel on SYSTEMS systems of ORDER, profiled after three warm-ups;
    the recursion's model of that solve."""
    import cupy

    from sim.durbin import SPEC, batched_gpu
    from sim.durbin.bench_runs import batch_input
    from sim.gpu.roofline import Setup, models

    r = cupy.asarray(batch_input(SYSTEMS, ORDER))
    for _ in range(3):
        batched_gpu.batched(r, "register", 128)
    with profiled(True):
        batched_gpu.batched(r, "register", 128)
    return models(SPEC, Setup(SYSTEMS * ORDER, preset="lpc", stats={"frames": SYSTEMS}))["recursion"]
