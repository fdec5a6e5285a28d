"""The CS 267 particle scene: n particles in the square box, stepped on the CPU (or the GPU).

One step: bin the particles ("bin"), add the forces of the neighbour bins ("forces"), move and
reflect off the walls ("move"). The CPU path reproduces the course's O(n^2) starter bit for bit.
The starters' distance statistics (absmin, absavg) are kept per step.
"""

from __future__ import annotations

import time

import numpy as np

from sim.backend import BackendUnavailable, choose_backend, gpu_status
from sim.colormap import MISMATCH_RGBA, block_colors, colormap
from sim.particles import binning_cpu, world
from sim.particles.init import INITS
from sim.scene import Scene


class DistanceStats:
    """The starters' absmin / absavg: per step the closest pair and the mean pair distance (in cutoffs)."""

    def __init__(self) -> None:
        self.absmin = 1.0
        self.absavg_sum = 0.0
        self.steps_with_pairs = 0

    def add_step(self, dmin: float, dsum: float, dcount: int) -> None:
        if dcount > 0:
            self.absavg_sum += dsum / dcount
            self.steps_with_pairs += 1
        self.absmin = min(self.absmin, dmin)

    @property
    def absavg(self) -> float:
        return self.absavg_sum / self.steps_with_pairs if self.steps_with_pairs else 0.0

    def warnings(self) -> list[str]:
        out = []
        if self.absmin < 0.4:
            out.append("The minimum distance is below 0.4 meaning that some particle is not interacting")
        if self.absavg < 0.8:
            out.append("The average distance is below 0.8 meaning that most particles are not interacting")
        return out


class ParticlesScene(Scene):
    name = "particles"
    presets = {
        "2020": "the 2020+ starter's state: mt19937(seed), shuffled lattice, velocities U(-1, 1)",
        "legacy": "the 2011-2019 starter's state: srand48(seed), lrand48, drand48",
    }
    stages = ("bin", "forces", "move")
    steps_per_frame = 10  # one displayed frame per frame of the course's output file
    dt = world.DT
    variants = ("plain", "tiled", "blockscan")  # GPU variants (see sim/particles/gpu.py)
    block_sizes = (32, 64, 128, 256, 512, 1024)
    default_counts = {"2020": 10_000, "legacy": 10_000}
    params = ()

    def __init__(self, preset: str = "2020", backend: str = "cpu", n: int | None = None, seed: int | None = None,
                 forces: bool = True, variant: str = "plain", block: int = 256, precision: str = "fp64",
                 stats: bool = True):
        super().__init__()
        self.seed = 1 if seed is None else int(seed)
        self.forces_on = forces  # off: the course's control run (absavg ~ 0.67)
        self.stats_on = stats
        if variant not in self.variants:
            raise ValueError(f"unknown variant {variant!r} (choose from {', '.join(self.variants)})")
        if precision not in ("fp64", "fp32"):
            raise ValueError(f"unknown precision {precision!r} (choose fp64 or fp32)")
        self.variant, self.block, self.precision = variant, int(block), precision
        self.gpu = None
        self.device = 0  # the CUDA device of the GPU backend
        self.verify = False
        self.verification: dict | None = None
        self.mismatch = None  # particles whose GPU step differs from the CPU's (last check), in GPU order
        self.backend, self.backend_note = choose_backend(backend, self.supported_backends)
        if self.backend == "gpu" and not forces:
            raise ValueError("the forces-off control runs on the CPU")
        self.load_preset(preset, n)

    @property
    def supported_backends(self) -> tuple[str, ...]:
        return ("cpu", "gpu") if gpu_status().available else ("cpu",)

    @property
    def gpu_reason(self) -> str:
        status = gpu_status()
        return "" if status.available else status.reason

    @property
    def count_range(self) -> tuple[int, int]:
        return 1, (20_000_000 if self.backend == "gpu" else 2_000_000)

    @property
    def takes_count(self) -> bool:
        return True

    def load_preset(self, name: str, n: int | None = None) -> None:
        if name not in self.presets:
            raise ValueError(f"unknown init {name!r} (choose from {', '.join(self.presets)})")
        n = n or self.default_counts[name]
        lo, hi = self.count_range
        if not lo <= n <= hi:
            raise ValueError(f"particle count {n:,} out of range {lo}..{hi:,} on the {self.backend.upper()}")
        x, y, vx, vy = INITS[name](n, self.seed)
        self.size = world.box_size(n)
        self.nbins = binning_cpu.bin_count(self.size)
        if self.backend == "gpu":
            self.gpu = self._new_gpu(x, y, vx, vy)
        else:
            self._use_host_state(x, y, vx, vy)
        self.preset, self.target_n = name, n
        self._stats = DistanceStats()
        self.steps = 0
        self._new_timer()

    def _new_gpu(self, x, y, vx, vy):
        from sim.particles.gpu import ParticlesGpu

        return ParticlesGpu(x, y, vx, vy, self.size, self.variant, self.precision, self.block, self.stats_on,
                            device=self.device)

    def _use_host_state(self, x, y, vx, vy) -> None:
        self.x, self.y, self.vx, self.vy = (np.ascontiguousarray(a, np.float64) for a in (x, y, vx, vy))
        self.ax = np.zeros(self.x.shape[0])
        self.ay = np.zeros(self.x.shape[0])

    def _new_timer(self) -> None:
        if self.backend == "gpu":
            from sim.cuda import EventStageTimer

            self.timer = EventStageTimer(("forces+move", "bin"))
        else:
            from sim.timing import StageTimer

            self.timer = StageTimer(self.stages)

    def set_backend(self, backend: str) -> None:
        """Move the state across without a reset (the distance statistics start over)."""
        if backend == self.backend:
            return
        if backend == "gpu":
            if self.gpu_reason:
                raise BackendUnavailable(f"GPU backend unavailable: {self.gpu_reason}")
            self.gpu = self._new_gpu(self.x, self.y, self.vx, self.vy)
        else:
            self._use_host_state(*self.gpu.host_state())
            self.gpu = None
        self.backend = backend
        self._stats = DistanceStats()
        self.verify, self.verification, self.mismatch = False, None, None
        self._new_timer()

    def set_variant(self, variant: str) -> None:
        if variant not in self.variants:
            raise ValueError(f"unknown variant {variant!r} (choose from {', '.join(self.variants)})")
        self.variant = variant
        if self.gpu is not None:
            self.gpu = self._new_gpu(*self.gpu.host_state())

    def set_block(self, block: int) -> None:
        if not (32 <= int(block) <= 1024 and int(block) % 32 == 0):
            raise ValueError(f"block size must be a multiple of 32 from 32 to 1024, got {block}")
        self.block = int(block)
        if self.gpu is not None:
            self.gpu = self._new_gpu(*self.gpu.host_state())

    @property
    def stats_per_step(self) -> DistanceStats:
        """The starters' distance statistics so far (read from the device on the GPU)."""
        if self.gpu is not None and self.stats_on:
            stats = DistanceStats()
            stats.absmin, stats.absavg_sum, stats.steps_with_pairs = self.gpu.distance_stats()
            return stats
        return self._stats

    def reset(self) -> None:
        self.load_preset(self.preset, self.target_n)

    @property
    def n(self) -> int:
        return self.gpu.n if self.gpu is not None else self.x.shape[0]

    def set_verify(self, on: bool) -> None:
        if on and self.gpu is None:
            raise ValueError("verification checks the GPU's steps against the CPU: switch to the GPU backend first")
        self.verify = bool(on)
        self.verification = None
        self.mismatch = None

    def step(self) -> None:
        if self.gpu is not None:
            before = self.gpu.sorted_host_state() if self.verify else None
            self.gpu.step(self.timer)
            if before is not None:
                self._verify(before)
            self.steps += 1
            return
        n = self.n
        with self.timer.stage("bin"):
            self.bins, start, members = binning_cpu.sort_into_bins(self.x, self.y, self.size, self.nbins)
        with self.timer.stage("forces"):
            if self.forces_on:
                dmin, dsum, dcount = np.empty(n), np.empty(n), np.empty(n, np.int64)
                binning_cpu.forces(self.x, self.y, self.ax, self.ay, self.nbins, self.bins, start, members,
                                   dmin, dsum, dcount)
                self._stats.add_step(float(dmin.min(initial=1.0)), float(dsum.sum()), int(dcount.sum()))
            else:
                self.ax[:] = 0.0
                self.ay[:] = 0.0
                self._stats_without_forces(start, members)
        with self.timer.stage("move"):
            binning_cpu.move(self.x, self.y, self.vx, self.vy, self.ax, self.ay, self.size)
        self.steps += 1

    def _verify(self, before) -> None:
        """Step the GPU's pre-step state on the CPU and compare each particle after the step.

        The GPU adds the same forces in another order (and may fuse multiply-adds), so a correct
        step differs by rounding only: ~1e-18 in fp64 here. 1e-12 (fp64) or 1e-5 (fp32) of the box is
        far above that and far below a wrong force or a lost neighbour.
        """
        start = time.perf_counter()
        x, y, vx, vy, ids = before
        bins, first, members = binning_cpu.sort_into_bins(x, y, self.size, self.nbins)
        ax, ay = np.zeros_like(x), np.zeros_like(x)
        n = x.shape[0]
        binning_cpu.forces(x, y, ax, ay, self.nbins, bins, first, members, np.empty(n), np.empty(n),
                           np.empty(n, np.int64))
        binning_cpu.move(x, y, vx, vy, ax, ay, self.size)
        gx, gy, _, _, gids = self.gpu.sorted_host_state()
        cpu_x, cpu_y = np.empty(n), np.empty(n)
        cpu_x[ids], cpu_y[ids] = x, y
        distance = np.hypot(cpu_x[gids] - gx, cpu_y[gids] - gy)
        tolerance = (1e-12 if self.precision == "fp64" else 1e-5) * self.size
        self.mismatch = distance > tolerance
        differing = int(self.mismatch.sum())
        previous = self.verification or {"passes_checked": 0, "passes_mismatched": 0}
        self.verification = {
            "against": "CPU step from the same state",
            "differing": differing,
            "checked": n,
            "unit": "particles",
            "largest_difference": float(distance.max(initial=0.0)),
            "check_ms": (time.perf_counter() - start) * 1e3,
            "passes_checked": previous["passes_checked"] + 1,
            "passes_mismatched": previous["passes_mismatched"] + (differing > 0),
        }

    def _stats_without_forces(self, start, members) -> None:
        """The control run still measures distances (forces off, particles fly freely)."""
        dmin, dsum, dcount = np.empty(self.n), np.empty(self.n), np.empty(self.n, np.int64)
        ax, ay = np.zeros(self.n), np.zeros(self.n)
        binning_cpu.forces(self.x, self.y, ax, ay, self.nbins, self.bins, start, members, dmin, dsum, dcount)
        self._stats.add_step(float(dmin.min(initial=1.0)), float(dsum.sum()), int(dcount.sum()))

    def host_positions(self) -> tuple[np.ndarray, np.ndarray]:
        """x, y in the particles' own order (the course's output order)."""
        return self.gpu.host_positions() if self.gpu is not None else (self.x, self.y)

    def finish(self) -> None:
        """Wait for the device (GPU backend), so that a host clock can stop."""
        if self.gpu is not None:
            import cupy

            cupy.cuda.get_current_stream().synchronize()

    def single_step(self) -> None:
        self.step()
        self.timer.frame_done()

    # --- what the viewer reads ----------------------------------------------------------------
    @property
    def render_on_device(self) -> bool:
        return self.gpu is not None

    @property
    def block_colors_available(self) -> bool:
        return self.gpu is not None

    @property
    def color_modes(self) -> dict[str, str]:
        modes = {"speed": "Speed", "bin": "Bin", "uniform": "Uniform"}
        if self.block_colors_available:
            modes["block"] = "CUDA block"
        return modes

    def _arrays(self, xp):
        if self.gpu is not None:
            return self.gpu.state[:4]
        return self.x, self.y, self.vx, self.vy

    def _fill(self, xp, pos_out, col_out, mode: str) -> None:
        """Positions (x, y, 0, radius: discs half a cutoff wide, so touching discs are a cutoff apart)
        and colours, written with numpy or CuPy (``xp``) into (n, 4) float32 arrays."""
        x, y, vx, vy = self._arrays(xp)
        if pos_out is not None:
            pos_out[:, 0] = x
            pos_out[:, 1] = y
            pos_out[:, 2] = 0.0
            pos_out[:, 3] = world.CUTOFF / 2
        if col_out is None:
            return
        if mode == "speed":
            colormap(xp.sqrt(vx * vx + vy * vy) / 1.5, xp, col_out)
        elif mode == "bin":
            inv = self.nbins / self.size
            bins = xp.minimum((y * inv).astype(xp.int64), self.nbins - 1) * self.nbins + \
                xp.minimum((x * inv).astype(xp.int64), self.nbins - 1)
            colormap((bins * 0.618034) % 1.0, xp, col_out)
        elif mode == "block" and self.gpu is not None:
            block_colors(xp.arange(self.n, dtype=xp.int32), self.block, xp, col_out)
        elif mode == "uniform":
            col_out[:] = xp.asarray((0.3, 0.7, 0.95, 1.0), dtype=xp.float32)
        else:
            raise ValueError(f"unknown colour mode {mode!r} (choose from {', '.join(self.color_modes)})")
        if self.verify and self.mismatch is not None and self.mismatch.shape[0] == self.n:
            col_out[xp.asarray(self.mismatch)] = xp.asarray(MISMATCH_RGBA, dtype=xp.float32)

    def positions(self) -> np.ndarray:
        if self.gpu is not None:
            import cupy

            out = cupy.empty((self.n, 4), cupy.float32)
            self._fill(cupy, out, None, "uniform")
            return out.get()
        out = np.empty((self.n, 4), np.float32)
        self._fill(np, out, None, "uniform")
        return out

    def colors(self, mode: str) -> np.ndarray:
        if self.gpu is not None:
            import cupy

            out = cupy.empty((self.n, 4), cupy.float32)
            self._fill(cupy, None, out, mode)
            return out.get()
        out = np.empty((self.n, 4), np.float32)
        self._fill(np, None, out, mode)
        return out

    def write_render(self, pos_out, col_out, mode: str) -> None:
        """GPU backend: fill CuPy arrays (n, 4) that alias the renderer's GL buffers; no host copy."""
        import cupy

        self._fill(cupy, pos_out, col_out, mode)

    def stats(self) -> dict:
        stats = self.stats_per_step
        return {"n": self.n, "steps": self.steps, "sim_time": self.sim_time,
                "absmin": stats.absmin, "absavg": stats.absavg}
