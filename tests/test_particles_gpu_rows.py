"""The particles step's neighbours read by row (binning.cu's LAST_BINS): taken while no particle moved more
than a bin less the cutoff in the last step, and through the index after a step that moved one further.
Each step is held against a CPU step from the same state (run with pytest -m gpu on a GPU machine)."""

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


def kick(g, seed: int) -> None:
    x, y, vx, vy = g.host_state()
    rng = np.random.default_rng(seed)
    flung = rng.choice(N, KICKED, replace=False)
    angle = rng.uniform(0, 2 * np.pi, KICKED)
    vx[flung], vy[flung] = 300.0 * np.cos(angle), 300.0 * np.sin(angle)
    g.load_state(x, y, vx, vy)


@pytest.mark.parametrize("variant", ["plain", "texture", "blockscan"])
def test_calm_steps_read_by_row_and_a_far_move_reads_the_next_through_the_index(variant):
    seed = int(np.random.default_rng().integers(1, 1 << 30))
    g = particles(variant, seed)
    assert g.far.get()[0] == 1, "binned afresh: the rows are in no bin order"
    assert step_against_cpu(g) < 1e-12
    for _ in range(5):  # calm: every step by row
        assert g.far.get()[0] == 0
        assert step_against_cpu(g) < 1e-12
    kick(g, seed)
    assert g.far.get()[0] == 1, "state loaded: binned afresh"
    assert step_against_cpu(g) < 1e-12  # through the index; the flung particles move 0.15
    assert g.far.get()[0] == 1, "a move longer than a bin less the cutoff: the next step through the index"
    for _ in range(3):
        assert step_against_cpu(g) < 1e-12


def test_the_flag_matters_a_step_read_by_row_after_a_far_move_misses_pairs():
    """The same state twice: one steps as the flag says (through the index), the other with the flag cleared
    by hand (by row, as if no particle had moved far): it misses the flung particles' new neighbours."""
    seed = int(np.random.default_rng().integers(1, 1 << 30))
    right, wrong = particles("plain", seed), particles("plain", seed)
    for g in (right, wrong):
        for _ in range(3):
            g.step(NULL_TIMER)
        kick(g, seed)
        g.step(NULL_TIMER)
        assert g.far.get()[0] == 1
    wrong.far[...] = 0
    assert step_against_cpu(right) < 1e-12
    assert step_against_cpu(wrong) > 1e-9
