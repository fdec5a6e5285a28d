"""What a scene says about its checks and its items, for the base class (``sim.scene.Scene``): verification
(``v``: the scene's ``Checks``) and the items the viewer's pointer asks about (its ``Inspector``), both in
``sim.checks``. The scene holds ``checks``, ``inspector`` and ``spec``, and its hooks ``gpu_kernels_run`` and
``_invalidate_checks``."""

from __future__ import annotations

import time

import numpy as np

from sim.checks import Verification


class SceneChecks:
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
        return self.checks.marked(count)

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
