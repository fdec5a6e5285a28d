"""A scene's GPU knobs: the kernel variant, the CUDA block and the construction options it runs with.

``Knobs`` checks each choice against the scene's spec (``SceneSpec.gpu``, ``SceneSpec.options``) and
applies it through the scene's ``_apply_gpu_knobs`` hook: a kernel that does not compile takes the GPU
off and the state on to the CPU (``Scene.gpu_failed``), anything else refused puts the knob back. The
scene holds one (``Scene.knobs``); its ``variant``, ``block``, ``options`` and setters are these.
"""

from __future__ import annotations

from sim.backend import BackendUnavailable
from sim.cuda import GpuCompileError


class Knobs:
    def __init__(self, scene, variant: str | None, block):
        self.scene = scene
        spec = scene.spec
        gpu = spec.gpu
        self.variant = self.valid_variant(variant if variant is not None else gpu.default_variant) if gpu else ""
        self.block = self.valid_block(block if block is not None else gpu.default_block) if gpu else None
        self.options = {o.name: o.default for o in spec.options}

    def valid_variant(self, variant: str) -> str:
        variants = self.scene.spec.gpu.variants
        if variant not in variants:
            raise ValueError(f"unknown variant {variant!r} (choose from {', '.join(variants)})")
        return variant

    @staticmethod
    def valid_block(block):
        """Threads (a multiple of 32 up to 1024) or a 2D shape (w, h) of at most 1024 threads."""
        if isinstance(block, (tuple, list)):
            w, h = (int(v) for v in block)
            if not (w >= 1 and h >= 1 and w * h <= 1024):
                raise ValueError(f"block shape {w}x{h} must have 1 to 1024 threads")
            return (w, h)
        block = int(block)
        if not (32 <= block <= 1024 and block % 32 == 0):
            raise ValueError(f"block size must be a multiple of 32 from 32 to 1024, got {block}")
        return block

    def set_variant(self, variant: str) -> None:
        self._set(self.valid_variant(variant), self.block)

    def set_block(self, block) -> None:
        self._set(self.variant, self.valid_block(block))

    def _set(self, variant: str, block) -> None:
        before = self.variant, self.block

        def undo() -> None:
            self.variant, self.block = before

        self.variant, self.block = variant, block
        self.apply(undo)

    def set_option(self, name: str, value: str, apply: bool = True) -> None:
        option = next((o for o in self.scene.spec.options if o.name == name), None)
        if option is None:
            raise ValueError(f"{self.scene.spec.name} has no option {name!r}")
        if value not in option.choices:
            raise ValueError(f"unknown {name} {value!r} (choose from {', '.join(option.choices)})")
        before = self.options.get(name)
        self.options[name] = value
        if apply:
            self.apply(lambda: self.options.__setitem__(name, before))

    def apply(self, undo) -> None:
        """The knobs just set reach the GPU state. A kernel that does not compile takes the GPU off and the
        state on to the CPU (BackendUnavailable says why), whichever knob it was; anything else refused puts
        the knob back (``undo``) and raises."""
        scene = self.scene
        try:
            scene._apply_gpu_knobs()
        except GpuCompileError as exc:
            raise BackendUnavailable(scene.gpu_failed(exc)) from None
        except Exception:
            undo()
            raise
        scene._invalidate_checks()
