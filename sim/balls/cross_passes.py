"""A balls scene's proximity pass with its search on the other backend than the physics, and verification
of a CUDA pass: CPU physics with CUDA proximity (the seed's set-up: the state copied over, the pairs back),
GPU physics with the CPU twin's search (the pair lists copied back), and per ball the GPU's partners
against the CPU twin's from the same state (``BallsScene.checked_lists`` keeps both for the inspector)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import numpy as np

from sim.balls import pipeline_cpu
from sim.framework.scene import Scene
from sim.pairs import differing_items, lists_from_pairs, pairs_from_lists

if TYPE_CHECKING:
    from sim.balls.gpu import BallsGpu
    from sim.balls.pipeline_cpu import HostBalls
    from sim.balls.world import TroughWalls


class CrossPasses(Scene):
    """The passes of ``BallsScene`` that cross between the backends, and its check of a CUDA pass."""

    if TYPE_CHECKING:  # the scene's own (BallsScene)
        gpu: BallsGpu | None
        trough: TroughWalls
        thread_of: np.ndarray | None
        last_tests: int
        last_pairs: int
        checked_lists: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None

        @property
        def gpu_balls(self) -> BallsGpu: ...

        @property
        def cpu_balls(self) -> HostBalls: ...

        def _new_gpu(self, pos, vel, omega, trough, ids=None) -> BallsGpu: ...

    def _gpu_pass_for_cpu(self) -> None:
        """CPU physics, CUDA proximity (the seed's set-up): copy the state over, the pairs back."""
        host = self.cpu_balls
        with self.timer.stage("sort"):
            if self.gpu is None:
                self.gpu = self._new_gpu(host.pos, host.vel, host.omega, self.trough)
            else:
                self.gpu_balls.load(host.pos, host.vel, host.omega)
        result = self.gpu_balls.proximity_pass(self.timer)
        with self.timer.stage("proximity"):
            count, slots = self.gpu_balls.host_lists()
            ids = self.gpu_balls.ids[: self.gpu_balls.n].get()
            self.thread_of = np.empty_like(ids)
            self.thread_of[ids] = np.arange(ids.shape[0], dtype=ids.dtype)
            mine, theirs = pairs_from_lists(count, slots)
            host.pairs = np.column_stack([ids[mine], ids[theirs]]).astype(np.int64)
        self.last_tests, self.last_pairs = result.tests, result.pairs
        if self.checks.on:
            self._verify(host.pos, host.vel, *lists_from_pairs(host.pairs, self.n))

    def _cpu_pass_for_gpu(self) -> None:
        """GPU physics, CPU proximity: copy the state over, the pair lists back."""
        with self.timer.stage("sort"):
            pos, vel, omega = self.gpu_balls.host_state()
            keep = pos[:, 1] >= self.trough.fallen_y
            if not keep.all():
                pos, vel, omega = pos[keep], vel[keep], omega[keep]
                self.gpu_balls.load(pos, vel, omega, self.gpu_balls.host_ids()[keep])
        pairs, self.last_tests, self.last_pairs = pipeline_cpu.proximity(pos, vel, self.knobs.variant, self.timer)
        self.gpu_balls.set_lists(pairs)

    def _verify(self, pos, vel, count, slots) -> None:
        """Per ball: the GPU's partners against the CPU twin's from the same state."""
        started = time.perf_counter()
        pairs, _, found = pipeline_cpu.proximity(pos, vel, self.knobs.variant)
        cpu_count, cpu_slots = lists_from_pairs(pairs, pos.shape[0])
        grid = self.knobs.variant == "grid"
        against = "the CPU grid (every pair the predicate accepts)" if grid else "the CPU z-sweep"
        self.checked_lists = (count, slots, cpu_count, cpu_slots)
        self.checks.record(
            against,
            differing_items(count, slots, cpu_count, cpu_slots),
            started,
            {"pairs on the GPU": int(count.sum()) // 2, "pairs on the CPU": found},
        )
