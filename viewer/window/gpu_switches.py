"""The GPU-only switches: the physics backend (a), verification (v), the kernel variant (q) and CUDA
block size (Q), and why colouring by CUDA block (c) cannot be chosen. Each one says why it cannot
act, on this machine or for this scene, instead of failing. ``Controller.gpu`` holds one; it acts
through the controller's message line and guarded ``act``."""

from __future__ import annotations

from sim.cmdline.cli import block_text
from viewer.keys import BLOCK_SIZE_KEY, GPU_PHYSICS_KEY, VARIANT_KEY, VERIFY_KEY


def _next_after(choices, current):
    """The choice after ``current``, wrapping around (the first one if ``current`` is unknown)."""
    choices = list(choices)
    try:
        return choices[(choices.index(current) + 1) % len(choices)]
    except ValueError:
        return choices[0]


class GpuSwitches:
    def __init__(self, ctl):
        self.ctl = ctl  # the controller: its scene, message line and act

    @property
    def scene(self):
        return self.ctl.scene

    def reason(self) -> str | None:
        """Why this scene cannot run on the GPU here, or None when it can."""
        return self.scene.gpu_reason or None  # gpu_status() catches CUDA errors itself

    def ready(self, label: str, capability, what: str) -> bool:
        """True when the key labelled ``label`` can act on this scene here; else say why."""
        reason = self.reason()
        if reason is not None:
            self.ctl.say(f"{label}: needs a GPU: {reason}")
            return False
        if capability is None:
            self.ctl.say(f"{label}: the {self.scene.spec.name} scene has no {what}")
            return False
        return True

    # --- backend ----------------------------------------------------------------------------------
    def set_backend(self, backend: str) -> None:
        if backend == self.scene.backend:
            return
        reason = self.reason() if backend == "gpu" else None
        if reason:
            self.ctl.say(f"GPU backend unavailable: {reason}")
            return
        self.ctl.act(f"switching to {backend}", self.scene.set_backend, backend, done=f"physics on {backend}")

    def toggle_gpu_physics(self) -> None:
        reason = self.reason()
        if reason:
            self.ctl.say(f"{GPU_PHYSICS_KEY.label}: needs a GPU: {reason}")
            return
        self.set_backend("cpu" if self.scene.backend == "gpu" else "gpu")

    # --- the CUDA kernels: verification, variant, block size ------------------------------------------
    def kernels_run(self) -> bool:
        """Whether the scene's CUDA kernels (the variant of q, what v checks) run now."""
        return self.scene.gpu_kernels_run()

    def variant_note(self) -> str:
        spec = self.scene.spec
        if self.kernels_run() or spec.gpu is None:
            return ""
        return f" (used when the GPU kernels run: {spec.gpu.kernels_run_hint})"

    def toggle_verify(self) -> None:
        spec = self.scene.spec
        verifier = spec.verifier
        if not self.ready(VERIFY_KEY.label, verifier, "verification"):
            return
        on = not self.scene.checks.on
        if on and not self.kernels_run():
            self.ctl.say(f"v: verification checks the GPU kernels' work: {spec.gpu.kernels_run_hint}")
            return
        self.ctl.act(
            "verification",
            self.scene.checks.set_on,
            on,
            done=f"v: verification on: {verifier.checks}" if on else "v: verification off",
        )

    def cycle_variant(self) -> None:
        knobs = self.scene.spec.gpu
        if self.ready(VARIANT_KEY.label, knobs, "kernel variants"):
            own = self.scene.knobs  # the variants and, while loaded, the user's own kernel
            self._variant(self.scene.spec.words.variant, _next_after(own.variants, own.chosen), "q: ")

    def set_variant(self, variant: str) -> None:
        self._variant(f"variant {variant}", variant)

    def _variant(self, what: str, variant: str, label: str = "") -> None:
        words = self.scene.spec.words
        self.ctl.act(
            what,
            self.scene.knobs.set_variant,
            variant,
            done=lambda: f"{label}{words.variant} {self.scene.knobs.chosen}{self.variant_note()}",
        )

    def cycle_block_size(self) -> None:
        knobs = self.scene.spec.gpu
        if self.ready(BLOCK_SIZE_KEY.label, knobs, "CUDA block sizes"):
            self._block("block size", _next_after(knobs.blocks, self.scene.knobs.block), "Q: ")

    def set_block(self, block) -> None:
        self._block(f"block size {block_text(block)}", block)

    def _block(self, what: str, block, label: str = "") -> None:
        self.ctl.act(
            what,
            self.scene.knobs.set_block,
            block,
            done=lambda: f"{label}block size {block_text(self.scene.knobs.block)}",
        )

    # --- colouring by CUDA block -----------------------------------------------------------------
    def block_colors_reason(self) -> str | None:
        """Why colouring by CUDA block cannot be chosen now, or None."""
        spec = self.scene.spec
        reason = self.reason()
        if reason:
            return "needs a GPU: " + reason
        if spec.block_colors is None:
            return f"the {spec.name} scene has no CUDA block colouring"
        if not self.scene.knobs.block_colors_available():
            return f"no CUDA kernel handles the {spec.words.unit} now: {spec.gpu.kernels_run_hint}"
        return None
