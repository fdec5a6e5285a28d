"""The sdh scene's benchmark cases: the regression gate's headline (bench/regress.py) and the histogram's
Nsight Compute case (bench/ncu_models.py): 512,000 atoms, the tensor kernel."""

from sim.contract import GateFigure, GatePeer, GateRun, NcuCase

N = 512_000

GATE = (
    GateRun(
        "sdh 512000 tensor",
        ("-n", str(N), "--kernel", "tensor", "--block", "256"),
        (
            GateFigure(
                "sdh 512000 tensor, ms",
                "kernel_ms",
                (("n", N), ("backend", "gpu"), ("kernel", "tensor"), ("block", 256)),
                peer=(("n", N), ("kernel", "tiled")),
                peer_value="kernel_ms",
            ),
        ),
        peer=GatePeer("peer sdh 512000", "peer_sdh.py", ("--sizes", str(N), "--naive-max", "0")),
    ),
)

NCU = (NcuCase("histogram", "course", N, "tensor", 256),)
