"""One GPU bins the particles afresh only when they may have left their bins (binning.cu): between binnings
the step reads its neighbours by row, right after one through the index; a step that ends in a foreseen
binning counts the particles into their bins itself. Each step is held against a CPU step from the same
state (run with pytest -m gpu on a GPU machine)."""

import numpy as np
import pytest

from sim.gpu.timing import NULL_TIMER
from sim.particles import binning_cpu, pipeline_cpu, world
from sim.particles.init import init_2020

pytestmark = pytest.mark.gpu

N = 3000
KICKED = 40  # particles flung at 300 a second: 0.15 a step, ten times the margin (a bin, 0.0245, less the cutoff)


def particles(variant: str, seed: int):
    from sim.particles.gpu import ParticlesGpu

    x, y, vx, vy = init_2020(N, seed)
    return ParticlesGpu(x, y, vx, vy, world.box_size(N), variant, "fp64", 128, stats=False)


def calm(g) -> tuple[bool, float, float]:
    """(the next step reads through the index, the drift since the numbering, the last step's largest move)."""
    through, _, drift, moved, _ = g.calm.get()
    return bool(through), *(float(np.int32(v).view(np.float32)) for v in (drift, moved))


def foreseen(g) -> bool:
    """The next step counts the particles into their bins: a binning is foreseen after it."""
    return bool(g.calm[4].get())


def step_against_cpu(g) -> float:
    """One GPU step; its largest difference from a CPU step from the same state, at the box's scale (a
    velocity as the same share of the fastest particle's speed)."""
    x, y, vx, vy, ids = g.sorted_host_state()
    order = np.argsort(ids)
    before = [a[order] for a in (x, y, vx, vy)]
    g.step(NULL_TIMER)
    after = g.host_state()
    cpu = pipeline_cpu.stepped_copy(*before, g.size, binning_cpu.bin_count(g.size))
    position = max(np.abs(after[0] - cpu.x).max(), np.abs(after[1] - cpu.y).max())
    velocity = max(np.abs(after[2] - cpu.vx).max(), np.abs(after[3] - cpu.vy).max())
    fastest = max(float(np.hypot(cpu.vx, cpu.vy).max()), 1.0)
    return float(max(position, velocity * g.size / fastest))


def farthest_from_numbered_bin(g) -> float:
    """The largest distance along an axis of a row's particle from the bin its slot has in the numbering."""
    x, y, *_ = g.sorted_host_state()
    slot_bin = np.searchsorted(g.start.get(), np.arange(g.n), side="right") - 1
    side = g.size / g.nb
    lo_x, lo_y = (slot_bin % g.nb) * side, (slot_bin // g.nb) * side
    out_x = np.maximum(np.maximum(lo_x - x, x - (lo_x + side)), 0)
    out_y = np.maximum(np.maximum(lo_y - y, y - (lo_y + side)), 0)
    return float(max(out_x.max(), out_y.max()))


def kick(g, seed: int) -> None:
    x, y, vx, vy = g.host_state()
    rng = np.random.default_rng(seed)
    flung = rng.choice(N, KICKED, replace=False)
    angle = rng.uniform(0, 2 * np.pi, KICKED)
    vx[flung], vy[flung] = 300.0 * np.cos(angle), 300.0 * np.sin(angle)
    g.load_state(x, y, vx, vy)


@pytest.mark.parametrize("variant", ["plain", "tiled", "texture", "blockscan"])
def test_steps_by_row_until_the_drift_nears_the_margin_then_bin_afresh(variant):
    seed = int(np.random.default_rng().integers(1, 1 << 30))
    g = particles(variant, seed)
    assert calm(g)[0], "binned on creation: the first step reads through the index"
    binnings, counted, by_row, before = 0, 0, 0, 0.0
    for _ in range(120):
        through, drift, _ = calm(g)
        if not through:  # the rows in the numbering's order: the drift bounds how far each left its bin
            by_row += 1
            assert farthest_from_numbered_bin(g) <= drift * (1 + 1e-6)
        counts = foreseen(g)
        assert step_against_cpu(g) < 1e-12
        through, drift, moved = calm(g)
        assert moved == 0, "the step's move is folded into the drift"
        assert through or not counts, "a step that counted ends in a binning"
        if through:  # the drift would have passed the margin (or the step counted): binned afresh
            binnings += 1
            counted += counts
            assert drift == 0
            assert not g.count.get().any(), "the counts cleared for the next binning"
        else:
            assert before < drift < g.margin
        before = drift
    assert by_row > 80 and binnings >= 2, (by_row, binnings)  # the 2020 preset bins every ten steps or so
    assert counted >= binnings - 1, (counted, binnings)  # the moves change slowly: the binnings are foreseen


def test_a_far_move_bins_afresh_and_the_next_step_reads_through_the_index():
    seed = int(np.random.default_rng().integers(1, 1 << 30))
    g = particles("plain", seed)
    for _ in range(5):
        assert step_against_cpu(g) < 1e-12
    assert not calm(g)[0]
    kick(g, seed)
    assert calm(g)[0], "state loaded: binned afresh"
    counts = []
    for _ in range(4):  # each flung particle moves 0.15 a step: every step bins afresh
        counts.append(foreseen(g))
        assert step_against_cpu(g) < 1e-12
        through, drift, _ = calm(g)
        assert through and drift == 0
    # the first far move comes unforeseen (the binning counts after the step); then each step counts itself
    assert counts == [False, True, True, True]


def test_the_verdict_matters_a_step_by_row_after_a_far_move_misses_pairs():
    """The same state twice: one steps as the device decided (binned afresh, through the index), the other
    with the verdict overwritten by hand (by row, as if nobody had moved far): it misses the flung particles'
    new neighbours."""
    seed = int(np.random.default_rng().integers(1, 1 << 30))
    right, wrong = particles("plain", seed), particles("plain", seed)
    for g in (right, wrong):
        for _ in range(3):
            g.step(NULL_TIMER)
        kick(g, seed)
        g.step(NULL_TIMER)
        assert calm(g)[0]
    wrong.calm[0] = 0
    assert step_against_cpu(right) < 1e-12
    assert step_against_cpu(wrong) > 1e-9
