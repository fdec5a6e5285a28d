"""When a GPU rank renumbers (sim/particles/rank_drift.py): the forecast from the drift and the last move."""

from __future__ import annotations

import pytest

from sim.particles import world
from sim.particles.rank_drift import GROWTH, Drift


def test_two_ghost_rows_give_one_gpus_margin_one_gives_half():
    w = 2.5 * world.CUTOFF
    assert Drift(w, 2).margin == pytest.approx(w - world.CUTOFF - w / 100), "a bin less the cutoff, as one GPU"
    assert Drift(w, 1).margin == pytest.approx((w - world.CUTOFF) / 2 - w / 100)


def test_the_first_steps_renumber_until_a_move_is_known():
    d = Drift(2.5 * world.CUTOFF, 2)
    assert d.renumbers(True) and d.renumbers(False), "no step read yet: how far the next one goes is unknown"


def test_steps_keep_their_slots_while_two_more_moves_fit_the_margin():
    d = Drift(2.5 * world.CUTOFF, 2)
    move = d.margin / 20
    assert not d.read(True, move), "a renumbering step leaves no drift"
    assert d.drift == 0 and not d.renumbers(True)
    steps = 0
    while not d.renumbers(False):  # the running step keeps the slots; so may the next
        assert not d.read(False, move)
        steps += 1
    assert d.drift + 2 * GROWTH * move > d.margin, "the next step renumbers before the drift can pass the margin"
    kept = 20 - 2 * GROWTH  # moves of drift the margin holds beside the next two steps' forecast
    assert kept - 1 <= steps <= kept + 1


def test_a_drift_past_the_margin_is_reported():
    d = Drift(2.5 * world.CUTOFF, 2)
    d.read(True, 0.0)
    assert not d.read(False, d.margin * 0.9)
    assert d.read(False, d.margin * 0.2), "the next step would read neighbours from bins they may have left"
    d.renumbered()
    assert d.drift == 0


def test_fast_particles_renumber_every_step():
    d = Drift(2.5 * world.CUTOFF, 2)
    d.read(True, d.margin)  # a bin row in two steps
    assert d.renumbers(True) and d.renumbers(False)


def test_bins_a_cutoff_wide_renumber_every_step():
    d = Drift(world.CUTOFF, 2)
    d.read(True, 0.0)
    assert d.margin < 0 and d.renumbers(True) and d.renumbers(False)
