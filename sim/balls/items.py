"""One ball as the viewer's pointer sees it: its values, the CUDA thread that handled it, and
under verification its partners on the GPU beside the CPU twin's (``BallsScene.inspector``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sim.balls.kernels import INSPECT, INSPECT_HEAD, INSPECT_PER_PARTNER
from sim.framework.checks import Described, Inspector

if TYPE_CHECKING:
    from sim.balls.scene import BallsScene

RING = 8  # pinned copies in flight: the viewer reads each a frame or two after asking


class DeviceGather:
    """inspect.cu's output buffer on the device and a ring of pinned host copies of it (room for
    ``capacity`` partners): a copy is read before the ring comes round to it again."""

    def __init__(self, capacity: int):
        import cupy

        self.capacity = capacity
        words = INSPECT_HEAD + INSPECT_PER_PARTNER * capacity
        self.device = cupy.empty(words, cupy.float32)
        self.host = [np.frombuffer(cupy.cuda.alloc_pinned_memory(4 * words), np.float32, words) for _ in range(RING)]
        self.turn = 0

    def request(self, gpu, item: int):
        """Gather ball ``item`` of the GPU state and start its copy; (the host words, the event after the copy)."""
        import cupy

        from sim.gpu import cuda

        cuda.kernel(INSPECT, gpu.device)(
            (1,),
            (128,),
            (
                gpu.pos,
                gpu.vel,
                gpu.spin_yz,
                gpu.ids,
                gpu.count,
                gpu.partners,
                np.int64(gpu.stride),
                np.int32(gpu.capacity),
                np.int32(item),
                self.device,
            ),
        )
        words = self.host[self.turn]
        self.turn = (self.turn + 1) % RING
        stream = cupy.cuda.get_current_stream()
        runtime = cupy.cuda.runtime
        runtime.memcpyAsync(
            words.ctypes.data, self.device.data.ptr, words.nbytes, runtime.memcpyDeviceToHost, stream.ptr
        )
        return words, stream.record()


class BallInspector(Inspector):
    scene: BallsScene

    def __init__(self, scene: BallsScene) -> None:
        super().__init__(scene)
        self._gather: DeviceGather | None = None  # made on the first GPU description

    def item_key(self, item: int) -> int:
        """A ball's id: the GPU reorders the balls at every pass, and a pass on either backend drops the
        fallen ones (the balls after them move up); the id stays with the ball."""
        scene = self.scene
        if scene.backend == "gpu":
            return int(scene.gpu_balls.ids[int(item)].get())
        return int(scene.cpu_balls.ids[int(item)])

    def item_of_key(self, key: int) -> int | None:
        scene = self.scene
        if scene.backend == "gpu":
            import cupy

            found = cupy.flatnonzero(scene.gpu_balls.ids[: scene.n] == int(key))[:1].get()
        else:
            found = np.flatnonzero(scene.cpu_balls.ids == int(key))[:1]
        return int(found[0]) if found.size else None

    def _keys(self, indices) -> list[int]:
        scene = self.scene
        indices = np.asarray(indices, np.int64)
        if not indices.size:  # a ball with no partners: nothing to look up, on either backend
            return []
        if scene.backend == "gpu":
            import cupy

            return [int(v) for v in scene.gpu_balls.ids[cupy.asarray(indices)].get()]
        return [int(v) for v in scene.cpu_balls.ids[indices]]

    def prefetch(self, item: int) -> Described | None:
        """On the GPU, one launch gathers the ball's values, its partners' ids and positions into a few
        words (inspect.cu) and one copy starts them to pinned host memory; None on the CPU."""
        return self._request(item) if self.scene.backend == "gpu" else None

    def _request(self, item: int) -> Described:
        """``prefetch`` on the GPU."""
        item = self._checked(item)
        gpu = self.scene.gpu_balls
        if self._gather is None or self._gather.capacity < gpu.capacity:
            self._gather = DeviceGather(gpu.capacity)
        words, arrived = self._gather.request(gpu, item)
        return Described(item, arrived, lambda: self._from_words(item, words.copy()))

    def describe(self, item: int) -> dict[str, str]:
        scene = self.scene
        if scene.backend == "gpu":
            return self._request(item).values()
        item = self._checked(item)
        host, pairs = scene.cpu_balls, scene.cpu_balls.pairs
        partners = np.concatenate([pairs[pairs[:, 0] == item, 1], pairs[pairs[:, 1] == item, 0]])
        return self._values(
            item,
            int(host.ids[item]),
            host.pos[item],
            host.vel[item],
            host.omega[item],
            host.pos[partners],
            self._keys(partners),
        )

    def _checked(self, item) -> int:
        item = int(item)
        if not 0 <= item < self.scene.n:
            raise IndexError(f"no ball {item} (there are {self.scene.n:,})")
        return item

    def _from_words(self, item: int, words: np.ndarray) -> dict[str, str]:
        """describe's values from inspect.cu's words (a GPU ball)."""
        ints = words.view(np.int32)
        count = min(int(ints[0]), (words.size - INSPECT_HEAD) // INSPECT_PER_PARTNER)
        partners = words[INSPECT_HEAD : INSPECT_HEAD + INSPECT_PER_PARTNER * count].reshape(count, INSPECT_PER_PARTNER)
        vel, omega = words[6:10].copy(), np.array([words[9], words[10], words[11], 0.0], np.float32)
        vel[3] = 0.0
        return self._values(
            item, int(ints[1]), words[2:6], vel, omega, partners[:, 1:], [int(k) for k in partners[:, 0].view(np.int32)]
        )

    def _values(self, item: int, key: int, pos, vel, omega, partner_pos, partner_keys: list[int]) -> dict[str, str]:
        """The tooltip's rows, the same from either backend's values."""
        scene = self.scene
        gap = np.linalg.norm(partner_pos[:, :3] - pos[:3], axis=1) - (partner_pos[:, 3] + pos[3])
        speed = float(np.linalg.norm(vel[:3]))
        values = {
            "ball": f"#{key}",
            "position": _xyz(pos[:3]),
            "velocity": f"{_xyz(vel[:3])}  |v| {speed:.4g} units/s",
            "spin": _xyz(omega[:3]) + " rad/s",
            "radius": f"{pos[3]:.4g}",
            "contacts": f"{int(np.count_nonzero(gap < 0))} touching",
            "partners": _id_list(partner_keys),
        }
        thread = self._thread(item)
        if thread is not None:
            block = scene.knobs.threads
            values["CUDA"] = f"block {thread // block}, thread {thread % block} (of {block})"
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
        difference = (
            "; ".join(
                part
                for part in (
                    f"only GPU: {_id_list(self._keys(only_gpu))}" if only_gpu else "",
                    f"only CPU: {_id_list(self._keys(only_cpu))}" if only_cpu else "",
                )
                if part
            )
            or "same set, listed twice"
        )
        return [
            (
                "partners",
                str(int(count[item])),
                str(int(cpu_count[item])),
                f"{int(count[item]) - int(cpu_count[item]):+d}",
            ),
            ("partner ids", _id_list(self._keys(sorted(gpu))), _id_list(self._keys(sorted(cpu))), difference),
        ]


def _xyz(v) -> str:
    return "(" + ", ".join(f"{float(c):.6g}" for c in v) + ")"


def _id_list(keys, most: int = 8) -> str:
    """ "3: #12, #40, #41" (at most ``most`` shown)."""
    shown = ", ".join(f"#{k}" for k in keys[:most])
    more = f", … (+{len(keys) - most})" if len(keys) > most else ""
    return f"{len(keys)}" + (f": {shown}{more}" if keys else "")
