"""The particles scene's benchmark cases: the regression gate's headline (bench/regress.py) and each GPU
stage's Nsight Compute case (bench/ncu_models.py): 10M particles, the plain kernel in fp64 (the course's
precision), without the distance statistics (as the course's timed runs)."""

from sim.contract import GateFigure, GatePeer, GateRun, NcuCase

N = 10_000_000

GATE = (
    GateRun(
        "particles 10M plain",
        ("--backend", "gpu", "--sizes", str(N), "--variant", "plain", "--block", "128", "--steps", "1000"),
        (
            GateFigure(
                "particles 10M plain fp64, ms/step",
                "step_ms",
                (("scene", "particles"), ("n", N), ("backend", "gpu"), ("variant", "plain"), ("block", 128)),
                options=(("precision", "fp64"),),
                peer=(("n", N), ("method", "counting")),
                peer_value="ms_per_step",
            ),
        ),
        peer=GatePeer(
            "peer particles 10M", "peer_particles.py", ("--sizes", str(N), "--methods", "counting", "--steps", "1000")
        ),
    ),
)

NCU = tuple(
    NcuCase(stage, "2020", N, "plain", 128, steps=10, window=1, toggles=(("statistics", False),))
    for stage in ("bin", "forces+move")
)
