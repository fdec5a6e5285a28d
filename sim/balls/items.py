"""One ball as the viewer's pointer sees it: its values, the CUDA thread that handled it, and
under verification its partners on the GPU beside the CPU twin's (``BallsScene.inspector``)."""

from __future__ import annotations

import numpy as np

from sim.checks import Inspector


class BallInspector(Inspector):
    def item_key(self, item: int) -> int:
        """A ball's id: the GPU reorders the balls at every pass, and a pass on either backend drops the
        fallen ones (the balls after them move up); the id stays with the ball."""
        scene = self.scene
        if scene.backend == "gpu":
            return int(scene.gpu.ids[int(item)].get())
        return int(scene.host.ids[int(item)])

    def item_of_key(self, key: int) -> int | None:
        scene = self.scene
        if scene.backend == "gpu":
            import cupy

            found = cupy.flatnonzero(scene.gpu.ids[: scene.n] == int(key))[:1].get()
        else:
            found = np.flatnonzero(scene.host.ids == int(key))[:1]
        return int(found[0]) if found.size else None

    def _partners(self, item: int) -> np.ndarray:
        """The ball's proximity partners (indices now) in the current pair list."""
        scene = self.scene
        if scene.backend == "gpu":
            count = int(scene.gpu.count[item].get())
            return scene.gpu.partners.reshape(scene.gpu.capacity, scene.gpu.stride)[:count, item].get().astype(np.int64)
        pairs = scene.host.pairs
        return np.concatenate([pairs[pairs[:, 0] == item, 1], pairs[pairs[:, 1] == item, 0]])

    def _ball(self, indices) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(pos, vel, omega) rows of some balls, copied from wherever the state is (a few rows only)."""
        scene = self.scene
        indices = np.asarray(indices, np.int64)
        if scene.backend == "gpu":
            import cupy

            at = cupy.asarray(indices)
            return scene.gpu.rows(at)
        return scene.host.pos[indices], scene.host.vel[indices], scene.host.omega[indices]

    def _keys(self, indices) -> list[int]:
        scene = self.scene
        indices = np.asarray(indices, np.int64)
        if not indices.size:  # a ball with no partners: nothing to look up, on either backend
            return []
        if scene.backend == "gpu":
            import cupy

            return [int(v) for v in scene.gpu.ids[cupy.asarray(indices)].get()]
        return [int(v) for v in scene.host.ids[indices]]

    def describe(self, item: int) -> dict[str, str]:
        scene = self.scene
        item = int(item)
        if not 0 <= item < scene.n:
            raise IndexError(f"no ball {item} (there are {scene.n:,})")
        partners = self._partners(item)
        pos, vel, omega = self._ball(np.concatenate([[item], partners]))
        gap = np.linalg.norm(pos[1:, :3] - pos[0, :3], axis=1) - (pos[1:, 3] + pos[0, 3])
        speed = float(np.linalg.norm(vel[0, :3]))
        values = {
            "ball": f"#{self.item_key(item)}",
            "position": _xyz(pos[0, :3]),
            "velocity": f"{_xyz(vel[0, :3])}  |v| {speed:.4g} units/s",
            "spin": _xyz(omega[0, :3]) + " rad/s",
            "radius": f"{pos[0, 3]:.4g}",
            "contacts": f"{int(np.count_nonzero(gap < 0))} touching",
            "partners": _id_list(self._keys(partners)),
        }
        thread = self._thread(item)
        if thread is not None:
            values["CUDA"] = f"block {thread // scene.block}, thread {thread % scene.block} (of {scene.block})"
        return values

    def _thread(self, item: int) -> int | None:
        """The thread of the proximity kernel that handled the ball, when the kernels run."""
        scene = self.scene
        if not scene.gpu_kernels_run():
            return None
        if scene.backend == "gpu":
            return item
        if scene.thread_of is not None and item < scene.thread_of.shape[0]:
            return int(scene.thread_of[item])
        return None

    def describe_check(self, item: int) -> list[tuple[str, str, str, str]]:
        """The ball's partners on the GPU and on the CPU twin, from the last check's lists."""
        scene = self.scene
        if scene.checked_lists is None or not self.is_marked(item):
            return []
        count, slots, cpu_count, cpu_slots = scene.checked_lists
        if item >= count.shape[0]:
            return []
        gpu = set(int(v) for v in slots[item, : count[item]])
        cpu = set(int(v) for v in cpu_slots[item, : cpu_count[item]])
        only_gpu, only_cpu = sorted(gpu - cpu), sorted(cpu - gpu)
        difference = "; ".join(part for part in (
            f"only GPU: {_id_list(self._keys(only_gpu))}" if only_gpu else "",
            f"only CPU: {_id_list(self._keys(only_cpu))}" if only_cpu else "") if part) or "same set, listed twice"
        return [("partners", str(int(count[item])), str(int(cpu_count[item])),
                 f"{int(count[item]) - int(cpu_count[item]):+d}"),
                ("partner ids", _id_list(self._keys(sorted(gpu))), _id_list(self._keys(sorted(cpu))), difference)]


def _xyz(v) -> str:
    return "(" + ", ".join(f"{float(c):.6g}" for c in v) + ")"


def _id_list(keys, most: int = 8) -> str:
    """"3: #12, #40, #41" (at most ``most`` shown)."""
    shown = ", ".join(f"#{k}" for k in keys[:most])
    more = f", … (+{len(keys) - most})" if len(keys) > most else ""
    return f"{len(keys)}" + (f": {shown}{more}" if keys else "")
