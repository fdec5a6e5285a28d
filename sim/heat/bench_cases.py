"""The heat scene's benchmark cases: the regression gate's headlines (bench/regress.py) and the step's
Nsight Compute case (bench/ncu_models.py): 10000^2 cells, the temporal kernel at 32x4, 8 steps a launch
(the frame: the large preset in the window)."""

from sim.contract import GateFigure, GatePeer, GateRun, NcuCase

SIDE = 10_000

GATE = (
    GateRun(
        "heat 10000^2 temporal",
        ("--sizes", str(SIDE), "--kernel", "temporal", "--block", "32x4", "--k", "8", "--steps", "200"),
        (
            GateFigure(
                "heat 10000^2 temporal k8 32x4, ms/step",
                "ms_per_step",
                (("n", SIDE), ("backend", "gpu"), ("kernel", "temporal"), ("block", "32x4"), ("k", 8), ("fma", False)),
                peer=(("n", SIDE), ("kernel", "raw")),
                peer_value="ms_per_step",
            ),
        ),
        peer=GatePeer("peer heat 10000^2", "peer_heat.py", ("--n", str(SIDE))),
    ),
    # the frame with the panel's sections all open (the frame bench's default --panel all)
    GateRun(
        "frame heat 10000^2 1920x1080",
        (
            "--scene",
            "heat",
            "--preset",
            "large",
            "-n",
            str(SIDE * SIDE),
            "--size",
            "1920x1080",
            "--backend",
            "gpu",
            "--headless",
            "--frames",
            "60",
        ),
        (
            GateFigure(
                "frame heat 10000^2 1920x1080 panel open, ms",
                "frame_ms",
                (
                    ("scene", "heat"),
                    ("preset", "large"),
                    ("n", SIDE * SIDE),
                    ("backend", "gpu"),
                    ("width", 1920),
                    ("height", 1080),
                    ("panel", "all"),
                ),
            ),
        ),
        frame=True,
        report="frame-heat",
    ),
)

NCU = (NcuCase("step", "large", SIDE * SIDE, "temporal", (32, 4), steps=8, window=8, options=(("k", "8"),)),)
