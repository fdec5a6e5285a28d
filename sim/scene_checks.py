"""What a scene says about its checks and its items, for the base class (``sim.scene.Scene``): verification
(``v``: the scene's ``Checks``) and the items the viewer's pointer asks about (its ``Inspector``), both in
``sim.checks``. The scene holds ``checks``, ``inspector`` and ``spec``, and its hooks ``gpu_kernels_run`` and
``_invalidate_checks``."""

from __future__ import annotations

import time

import numpy as np

from sim import finite
from sim.checks import Verification


class SceneChecks:
    # Items whose values from a user's kernel were NaN, inf or garbage (a count out of range, an index that
    # names nothing): drawn like verification's marks whether it is on or not, until the scene's own kernel
    # steps again. ``suspect_note`` is the statistic ``sim.finite.STAT`` shows.
    suspect: np.ndarray | None = None
    suspect_note: str = finite.CLEAN

    def mark_suspect(self, items: np.ndarray | None, note: str) -> None:
        """A user's output just taken: ``items`` (bool, one a scene item; None: none) held NaN, inf or garbage,
        ``note`` says what (``finite.CLEAN`` when nothing)."""
        self.suspect = items if items is not None and items.any() else None
        self.suspect_note = note

    def clear_suspect(self) -> None:
        if self.suspect is not None or self.suspect_note != finite.CLEAN:
            self.mark_suspect(None, finite.CLEAN)

    # --- verification: the scene's checks (``sim.checks.Checks``) ------------------------------------------
    @property
    def verify(self) -> bool:
        return self.checks.on

    @verify.setter
    def verify(self, on: bool) -> None:
        self.checks.on = bool(on)

    @property
    def verification(self) -> Verification | None:
        return self.checks.verification

    @verification.setter
    def verification(self, result: Verification | None) -> None:
        self.checks.verification = result

    @property
    def mismatch(self) -> np.ndarray | None:
        """Items that differ in the last check (device order)."""
        return self.checks.mismatch

    @mismatch.setter
    def mismatch(self, marked: np.ndarray | None) -> None:
        self.checks.mismatch = marked

    def set_verify(self, on: bool) -> None:
        if on and self.spec.verifier is None:
            raise ValueError(f"the {self.spec.name} scene has no verification")
        if on and not self.gpu_kernels_run():
            raise ValueError(f"verification checks the GPU's work against the CPU: {self.spec.gpu.kernels_run_hint}")
        self.verify = bool(on)
        self._invalidate_checks()

    def record_check(self, against: str, mismatch: np.ndarray, started: float, details: dict | None = None,
                     unit: str = "") -> None:
        """Keep one check's result: ``mismatch`` marks the differing items (``unit``: what they are, the
        scene's items by default), ``started`` is its ``time.perf_counter()`` start."""
        self.checks.record(against, mismatch, (time.perf_counter() - started) * 1e3, details or {},
                           unit or self.spec.words.unit)

    def record_user_check(self, against: str, comparison, details: dict | None = None, unit: str = "") -> None:
        """Keep the check of a user's kernel (``sim.userkernel.adapter.Comparison``, timed by ``LiveStage``)."""
        self.checks.record(against, comparison.mismatch, comparison.check_ms, details or {},
                           unit or self.spec.words.unit)

    def marked(self, count: int) -> np.ndarray | None:
        """Verification's differing items and the suspect ones (a user's NaN, inf or garbage), or None."""
        checked, suspect = self.checks.marked(count), self.suspect
        if suspect is None or suspect.shape[0] != count:
            return checked
        return suspect if checked is None else checked | suspect

    # --- items the viewer's pointer asks about: the scene's inspector (``sim.checks.Inspector``) -------------
    def describe(self, item: int) -> dict[str, str]:
        return self.inspector.describe(item)

    def prefetch(self, item: int):
        return self.inspector.prefetch(item)

    def describe_check(self, item: int) -> list[tuple[str, str, str, str]]:
        return self.inspector.describe_check(item)

    def item_key(self, item: int) -> int:
        return self.inspector.item_key(item)

    def item_of_key(self, key: int) -> int | None:
        return self.inspector.item_of_key(key)

    def is_marked(self, item: int) -> bool:
        return self.inspector.is_marked(item)
