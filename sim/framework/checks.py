"""GPU work checked against the CPU (the scene's ``Checks``), and the items a user asks about (the
scene's ``Inspector``): what the scene base class (``sim.framework.scene.Scene``) holds for verification and the
viewer's pointer."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from sim.framework import finite

if TYPE_CHECKING:
    from sim.framework.scene import Scene


@dataclass
class Verification:
    """The last check of GPU work against the CPU, and the running totals."""

    against: str  # what the GPU was checked against, a noun phrase ("the CPU z-sweep")
    differing: int  # items that differ in the last check
    checked: int
    check_ms: float
    passes_checked: int
    passes_mismatched: int
    details: dict = field(default_factory=dict)  # scene-specific figures: {"pairs on the GPU": 1200}
    unit: str = ""  # what was checked: the scene's items, or e.g. "buckets"


class Checks:
    """Verification (``v``): whether it is on, the last check's result and the items it marked. The scene
    holds one (``Scene.checks``); a scene that keeps more of a check (the values it compared, for
    ``Inspector.describe_check``) forgets it in a function it adds to ``on_clear``."""

    def __init__(self, scene: Scene):
        self.scene = scene
        self.on = False
        self.verification: Verification | None = None
        self.mismatch: np.ndarray | None = None  # items that differ in the last check (device order)
        self.on_clear: list[Callable[[], None]] = []  # what else forgets the last check with ``clear``
        # Items whose values from a user's kernel were NaN, inf or garbage (a count out of range, an index that
        # names nothing): drawn like verification's marks whether it is on or not, until the scene's own
        # kernel steps again. ``suspect_note`` is the statistic ``sim.framework.finite.STAT`` shows.
        self.suspect: np.ndarray | None = None
        self.suspect_note: str = finite.CLEAN

    def mark_suspect(self, items: np.ndarray | None, note: str) -> None:
        """A user's output just taken: ``items`` (bool, one a scene item; None: none) held NaN, inf or garbage,
        ``note`` says what (``finite.CLEAN`` when nothing)."""
        self.suspect = items if items is not None and items.any() else None
        self.suspect_note = note

    def clear_suspect(self) -> None:
        if self.suspect is not None or self.suspect_note != finite.CLEAN:
            self.mark_suspect(None, finite.CLEAN)

    def set_on(self, on: bool) -> None:
        """Turn verification on or off; on needs the scene's verifier and its GPU kernels running."""
        spec = self.scene.spec
        if on and spec.verifier is None:
            raise ValueError(f"the {spec.name} scene has no verification")
        if on and not self.scene.gpu_kernels_run():
            hint = spec.gpu.kernels_run_hint if spec.gpu else "this scene has no GPU kernels"
            raise ValueError(f"verification checks the GPU's work against the CPU: {hint}")
        self.on = bool(on)
        self.clear()

    def clear(self) -> None:
        """What the last check found no longer holds (a new state, another kernel)."""
        self.verification = None
        self.mismatch = None
        for forget in self.on_clear:
            forget()

    def record(
        self, against: str, mismatch: np.ndarray, started: float, details: dict | None = None, unit: str = ""
    ) -> None:
        """Keep one check's result: ``mismatch`` marks the differing items (``unit``: what they are, the
        scene's items by default), ``started`` is its ``time.perf_counter()`` start."""
        self._keep(against, mismatch, (time.perf_counter() - started) * 1e3, details, unit)

    def record_user(self, against: str, comparison, details: dict | None = None, unit: str = "") -> None:
        """Keep the check of a user's kernel (``sim.userkernel.adapter.Comparison``, timed by ``LiveStage``)."""
        self._keep(against, comparison.mismatch, comparison.check_ms, details, unit)

    def _keep(self, against: str, mismatch: np.ndarray, check_ms: float, details: dict | None, unit: str) -> None:
        differing = int(np.count_nonzero(mismatch))
        before = self.verification
        self.mismatch = mismatch
        self.verification = Verification(
            against=against,
            differing=differing,
            checked=int(mismatch.shape[0]),
            check_ms=float(check_ms),
            passes_checked=(before.passes_checked if before else 0) + 1,
            passes_mismatched=(before.passes_mismatched if before else 0) + (differing > 0),
            details=details or {},
            unit=unit or self.scene.spec.words.unit,
        )

    def marked(self, count: int) -> np.ndarray | None:
        """The last check's differing items when verification is on and they match ``count`` items, and the
        suspect ones (a user's NaN, inf or garbage); None when neither."""
        checked = self.mismatch if self.on and self.mismatch is not None and self.mismatch.shape[0] == count else None
        suspect = self.suspect
        if suspect is None or suspect.shape[0] != count:
            return checked
        return suspect if checked is None else checked | suspect


class Described:
    """An item's description on its way from the device (``Inspector.prefetch``): ``ready()`` once its copy
    has arrived; ``values()`` is then what ``describe`` gives (it waits for the copy if it has not)."""

    def __init__(self, item: int, arrived, values):
        self.item = item
        self._arrived = arrived  # a CUDA event recorded after the copy
        self._values = values  # () -> dict, once the copy has arrived

    def ready(self) -> bool:
        return bool(self._arrived.done)

    def values(self) -> dict[str, str]:
        self._arrived.synchronize()
        return self._values()


class Inspector:
    """The items the viewer's pointer asks about (hover tooltip, pinned item), for a scene whose items are
    its indices. A scene with more to say hands out its own (``Scene.inspector_type``), built on the
    scene's public state. The viewer asks it (``Scene.inspector``)."""

    def __init__(self, scene: Scene):
        self.scene = scene

    def describe(self, item: int) -> dict[str, str]:
        """The values of one item, as label -> text in the scene's order (the first names it).

        ``item`` is what the view shows: a points view's index, a field's cell (``row * columns +
        column``), a plot point's ``Series.items`` entry. Read only that item (a few values copied
        from the device on the GPU, never the whole state), e.g. for a ball: id, position, velocity,
        partners, the CUDA block and thread that handled it; for a cell: its value (temperature); for
        a coefficient: its value and step. The default names the item only. IndexError when
        ``item`` is not one of the view's items.
        """
        return {self.scene.spec.words.one: f"#{int(item)}"}

    def prefetch(self, item: int) -> Described | None:
        """Start reading ``describe``'s values of ``item`` from the device without waiting, for a scene that
        keeps them there (the viewer asks every frame and shows the answer when it has arrived, so a
        tooltip costs the frame no host wait). None (the default) when ``describe`` is cheap at once."""
        return None

    def describe_check(self, item: int) -> list[tuple[str, str, str, str]]:
        """Under verification, for an item the last check marked: (value name, GPU value, CPU value,
        difference) rows from that check, so the user sees what differs. [] when the item was not
        marked or the scene keeps nothing to show."""
        return []

    def item_key(self, item: int) -> int:
        """A key that names ``item`` across steps (kernels may reorder the state: the balls' pass
        sorts it); the default is the index itself."""
        return int(item)

    def item_of_key(self, key: int) -> int | None:
        """The item ``item_key`` named, where it is now; None once it is gone."""
        return int(key) if 0 <= int(key) < self.scene.n else None

    def is_marked(self, item: int) -> bool:
        """Whether the last check marked ``item`` (verification on)."""
        marked = self.scene.checks.marked(self.scene.n)
        return bool(marked is not None and 0 <= item < marked.shape[0] and bool(marked[item]))
