"""Per-ball comparison of pair lists (what verification uses), on the CPU."""

import numpy as np

from sim.balls import proximity_cpu, world
from sim.pairs import differing_items as _differing_balls
from sim.pairs import lists_from_pairs as _lists_from_pairs
from sim.pairs import pairs_from_lists as _pairs_from_lists


def lattice_pairs():
    from sim.balls import presets

    pos, vel = presets.lattice(5)
    return proximity_cpu.proximity_pass(pos, vel, world.PAIR_LIFETIME, world.PROXIMITY_MARGIN)[0], pos.shape[0]


def test_lists_round_trip_and_agree_with_themselves():
    pairs, n = lattice_pairs()
    count, slots = _lists_from_pairs(pairs, n)
    assert count.sum() == 2 * len(pairs)
    mine, theirs = _pairs_from_lists(count, slots)
    assert {(int(a), int(b)) for a, b in zip(mine, theirs, strict=True)} == {
        (max(a, b), min(a, b)) for a, b in pairs.tolist()
    }
    assert not _differing_balls(count, slots, count, slots).any()


def test_a_missing_pair_marks_exactly_its_two_balls():
    pairs, n = lattice_pairs()
    rng = np.random.default_rng()
    k = rng.integers(len(pairs))
    count, slots = _lists_from_pairs(pairs, n)
    short = _lists_from_pairs(np.delete(pairs, k, axis=0), n)
    differ = _differing_balls(*short, count, slots)
    assert set(np.flatnonzero(differ)) == set(pairs[k].tolist())


def test_a_pair_listed_twice_is_a_difference():
    pairs, n = lattice_pairs()
    count, slots = _lists_from_pairs(pairs, n)
    doubled = _lists_from_pairs(np.vstack([pairs, pairs[:1]]), n)
    assert set(np.flatnonzero(_differing_balls(*doubled, count, slots))) == set(pairs[0].tolist())


def test_a_wrong_partner_is_a_difference():
    pairs, n = lattice_pairs()
    wrong = pairs.copy()
    wrong[5, 1] = (wrong[5, 1] + 1000) % n
    differ = _differing_balls(*_lists_from_pairs(wrong, n), *_lists_from_pairs(pairs, n))
    assert set(pairs[5].tolist()) | {int(wrong[5, 1])} == set(np.flatnonzero(differ))
