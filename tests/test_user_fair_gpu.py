"""The built-in columns of ``check`` and ``bench --kernel-file`` time the work the user's kernel does: each
scene's template, timed by the sandbox beside the built-in variant it copies, takes about as long (the
same launch, the same inputs, the same clock: sim/userkernel/timing.py). Once, the balls' built-in
column timed a whole pass (keys, sort, reorder, a host read-back) and called a copy of its own sweep 20x
faster than itself."""

from __future__ import annotations

import numpy as np
import pytest
from test_user_stages import adapter_of

from sim.gpu import cuda
from sim.registry import SCENES

REPEATS = 50
# (scene, stage, the built-in variant nearest the template, sizes, the factor allowed either way).
# heat, sdh and balls: the template is that variant's kernel written plainly, so within 2x at every size.
# durbin and particles: the template is the plainest kernel of the stage, not a copy (the built-in thread
# kernel stages its rows in shared memory; the built-in particles step fuses the move and the next count
# and reads through the bin order): one item only, where a launch's fixed cost is the time, within 3x.
CASES = [
    ("heat", "step", "global", (9, 2000 * 1500), 2.0),
    ("sdh", "histogram", "naive", (1, 20_000), 2.0),
    ("balls", "proximity", "global", (1, 20_000), 2.0),
    ("durbin", "batched", "thread", (1,), 3.0),
    ("particles", "forces", "plain", (1,), 3.0),
]


def timed(scene: str, stage: str, variant: str, size: int) -> tuple[float, float]:
    """(the template's median ms, the built-in variant's) on the same inputs, through the sandbox."""
    from sim.userkernel.sandbox import Sandbox
    from sim.userkernel.source import load

    adapter = adapter_of(scene, stage)
    inputs = adapter.inputs(size, 0)
    template = cuda.source_path(SCENES[scene].user_stage(stage).template)
    with Sandbox() as box:
        result = box.run(load(template, SCENES[scene], stage), inputs, adapter.default_block(), REPEATS, (variant,))
    assert len(result.ms) == REPEATS and len(result.builtin_ms[variant]) == REPEATS
    return float(np.median(result.ms)), float(np.median(result.builtin_ms[variant]))


@pytest.mark.gpu
@pytest.mark.parametrize(
    ("scene", "stage", "variant", "sizes", "factor"),
    CASES,
    ids=[f"{scene}-{variant}" for scene, _, variant, _, _ in CASES],
)
def test_the_template_times_like_the_builtin_it_copies(scene, stage, variant, sizes, factor):
    for size in sizes:
        mine, builtin = timed(scene, stage, variant, size)
        assert mine > 0 and builtin > 0
        assert 1 / factor <= mine / builtin <= factor, (size, mine, builtin)
