"""The controller's GPU-only switches: the physics backend (a), verification (v), the kernel variant
(q) and CUDA block size (Q), and colouring by CUDA block (c). Each one says why it cannot act, on
this machine or for this scene, instead of failing. A mixin of ``Controller``."""

from __future__ import annotations

from sim.cli import block_text
from sim.contract import BLOCK_COLORS
from viewer.window.keys import key_label


def _next_after(choices, current):
    """The choice after ``current``, wrapping around (the first one if ``current`` is unknown)."""
    choices = list(choices)
    try:
        return choices[(choices.index(current) + 1) % len(choices)]
    except ValueError:
        return choices[0]


class GpuSwitches:
    # --- backend and GPU-only switches --------------------------------------------------------
    def gpu_reason(self) -> str | None:
        """Why this scene cannot run on the GPU here, or None when it can."""
        return self.scene.gpu_reason or None  # gpu_status() catches CUDA errors itself

    def set_backend(self, backend: str) -> None:
        if backend == self.scene.backend:
            return
        reason = self.gpu_reason() if backend == "gpu" else None
        if reason:
            self.say(f"GPU backend unavailable: {reason}")
            return
        with self.guard(f"switching to {backend}"):
            self.scene.set_backend(backend)
            self.say(f"physics on {backend}")

    def toggle_gpu_physics(self) -> None:
        reason = self.gpu_reason()
        if reason:
            self.say(f"{key_label('toggle_gpu_physics')}: needs a GPU: {reason}")
            return
        self.set_backend("cpu" if self.scene.backend == "gpu" else "gpu")

    def _gpu_switch_ready(self, action: str, capability, what: str) -> bool:
        """True when the key of ``action`` can act on this scene here; else say why."""
        label = key_label(action)
        reason = self.gpu_reason()
        if reason is not None:
            self.say(f"{label}: needs a GPU: {reason}")
            return False
        if capability is None:
            self.say(f"{label}: the {self.spec.name} scene has no {what}")
            return False
        return True

    def gpu_kernels_run(self) -> bool:
        """Whether the scene's CUDA kernels (the variant of q, what v checks) run now."""
        return self.scene.gpu_kernels_run()

    def variant_note(self) -> str:
        if self.gpu_kernels_run() or self.spec.gpu is None:
            return ""
        return f" (used when the GPU kernels run: {self.spec.gpu.kernels_run_hint})"

    def toggle_verify(self) -> None:
        verifier = self.spec.verifier
        if not self._gpu_switch_ready("toggle_verify", verifier, "verification"):
            return
        on = not self.scene.verify
        if on and not self.gpu_kernels_run():
            self.say(f"v: verification checks the GPU kernels' work: {self.spec.gpu.kernels_run_hint}")
            return
        with self.guard("verification"):
            self.scene.set_verify(on)
            self.say(f"v: verification on: {verifier.checks}" if on else "v: verification off")

    def cycle_variant(self) -> None:
        knobs = self.spec.gpu
        if not self._gpu_switch_ready("cycle_variant", knobs, "kernel variants"):
            return
        with self.guard(self.words.variant):
            self.scene.set_variant(_next_after(knobs.variants, self.scene.variant))
            self.say(f"q: {self.words.variant} {self.scene.variant}{self.variant_note()}")

    def cycle_block_size(self) -> None:
        knobs = self.spec.gpu
        if not self._gpu_switch_ready("cycle_block_size", knobs, "CUDA block sizes"):
            return
        with self.guard("block size"):
            self.scene.set_block(_next_after(knobs.blocks, self.scene.block))
            self.say(f"Q: block size {block_text(self.scene.block)}")

    def set_variant(self, variant: str) -> None:
        with self.guard(f"variant {variant}"):
            self.scene.set_variant(variant)
            self.say(f"{self.words.variant} {self.scene.variant}{self.variant_note()}")

    def set_block(self, block) -> None:
        with self.guard(f"block size {block_text(block)}"):
            self.scene.set_block(block)
            self.say(f"block size {block_text(self.scene.block)}")

    # --- colouring by CUDA block ----------------------------------------------------------------
    def block_colors_reason(self) -> str | None:
        """Why colouring by CUDA block cannot be chosen now, or None."""
        reason = self.gpu_reason()
        if reason:
            return "needs a GPU: " + reason
        if self.spec.block_colors is None:
            return f"the {self.spec.name} scene has no CUDA block colouring"
        if not self.scene.block_colors_available():
            return f"no CUDA kernel handles the {self.words.unit} now: {self.spec.gpu.kernels_run_hint}"
        return None

    def toggle_block_colors(self) -> None:
        label = key_label("toggle_block_colors")
        if self.color_mode == BLOCK_COLORS:
            self._leave_block_colors()
            self.say(f"{label}: colour by {self.scene.color_modes.get(self.color_mode, self.color_mode)}")
            return
        if not self._gpu_switch_ready("toggle_block_colors", self.spec.block_colors, "CUDA block colouring"):
            return
        reason = self.block_colors_reason()
        if reason is not None or BLOCK_COLORS not in self.scene.color_modes:
            self.say(f"{label}: {reason or 'the scene offers no CUDA block colouring now'}")
            return
        self._color_before_block = self.color_mode
        self.color_mode = BLOCK_COLORS
        self.say(f"{label}: colour by CUDA block")

    def _leave_block_colors(self) -> None:
        modes = self.scene.color_modes
        fallback = next((m for m in modes if m != BLOCK_COLORS), "")
        previous = self._color_before_block
        self.color_mode = previous if previous in modes and previous != BLOCK_COLORS else fallback
