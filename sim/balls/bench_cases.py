"""The balls scene's benchmark cases: the regression gate's headlines (bench/regress.py) and each GPU
stage's Nsight Compute case (bench/ncu_models.py), all on 10M balls dropped in the block preset with the
grid search (the frames: 1M balls in the window)."""

from sim.contract import GateFigure, GatePeer, GateRun, NcuCase

M = 1_000_000
N = 10 * M
FRAME = (("scene", "balls"), ("n", 1 * M), ("backend", "gpu"), ("width", 1920), ("height", 1080), ("panel", "all"))

GATE = (
    GateRun(
        "balls 10M grid",
        (
            "--backend",
            "gpu",
            "--preset",
            "block",
            "-n",
            str(N),
            "--variant",
            "grid",
            "--block",
            "128",
            "--steps",
            "120",
        ),
        (
            GateFigure(
                "balls 10M grid, ms/step",
                "step_ms",
                (
                    ("scene", "balls"),
                    ("preset", "block"),
                    ("n", N),
                    ("backend", "gpu"),
                    ("variant", "grid"),
                    ("block", 128),
                ),
                peer=(("n", N),),
                peer_value="ms_per_step",
            ),
        ),
        peer=GatePeer("peer balls 10M", "peer_balls.py", ("--sizes", str(N), "--steps", "60")),
    ),
    # the frames as a user has the window: the panel drawn with every section open (the frame bench's
    # default --panel all); balls are the frame bench's default scene
    GateRun(
        "frame 1M balls 1920x1080, picking",
        ("-n", str(1 * M), "--size", "1920x1080", "--backend", "gpu", "--headless", "--frames", "60", "--pick"),
        (
            GateFigure("frame 1M balls 1920x1080 panel open, ms", "frame_ms", FRAME),
            GateFigure("frame 1M balls 1920x1080 panel open picking, ms", "pick_frame_ms", FRAME),
        ),
        frame=True,
        report="frame",
    ),
)

NCU = tuple(
    NcuCase(stage, "block", N, "grid", 128, steps=6, window=window)
    for stage, window in (("sort", 6), ("proximity", 6), ("forces+integrate", 1))
)
