"""A scene's GPU knobs: the kernel variant, the CUDA block and the construction options it runs with.

``Knobs`` checks each choice against the scene's spec (``SceneSpec.gpu``, ``SceneSpec.options``) and
applies it through the scene's ``apply_gpu_knobs`` hook: a kernel that does not compile takes the GPU
off and the state on to the CPU (``Scene.gpu_failed``), anything else refused puts the knob back. The
scene holds one (``Scene.knobs``): read and set the knobs here.

A user's own kernel (``sim.userkernel.live.LiveStage``) is one more variant while it is loaded, named
after its file: chosen, it does the scene's steps (``Scene.run_frame``) while the scene's GPU kernels
run and it has a build that has not failed; ``variant`` stays the built-in one the scene falls back on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from sim.gpu.backend import BackendUnavailable
from sim.gpu.cuda import GpuCompileError

if TYPE_CHECKING:
    from sim.framework.scene import Scene
    from sim.userkernel.live import LiveStage


class Knobs:
    def __init__(self, scene: Scene, variant: str | None, block):
        self.scene = scene
        self.user: LiveStage | None = None  # a user's own kernel while one is loaded
        self.user_chosen = False
        spec = scene.spec
        gpu = spec.gpu
        self.variant = self.valid_variant(variant if variant is not None else gpu.default_variant) if gpu else ""
        self.block = self.valid_block(block if block is not None else gpu.default_block) if gpu else None
        self.options = {o.name: o.default for o in spec.options}

    @property
    def variants(self) -> tuple[str, ...]:
        """What q cycles: the spec's variants, and the user's own kernel while one is loaded."""
        gpu = self.scene.spec.gpu
        return (gpu.variants if gpu else ()) + ((self.user.variant,) if self.user is not None else ())

    @property
    def threads(self) -> int:
        """The block as threads, for a scene whose kernels run one-dimensional blocks (a spec with GPU knobs
        whose blocks are thread counts)."""
        return cast(int, self.block)

    @property
    def chosen(self) -> str:
        """The variant chosen: the user's kernel's name, else ``variant``."""
        return self.user.variant if self.user_chosen and self.user is not None else self.variant

    def valid_variant(self, variant: str) -> str:
        gpu = self.scene.spec.gpu
        if gpu is None or variant not in gpu.variants:
            raise ValueError(f"unknown variant {variant!r} (choose from {', '.join(self.variants)})")
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
        if self.user is not None and variant == self.user.variant:
            self.user_chosen = True
            self.scene.checks.clear()
            return
        self._set(self.valid_variant(variant), self.block)
        self.user_chosen = False

    # --- a user's own kernel -----------------------------------------------------------------------
    def use(self, live) -> None:
        """Load a user's kernel (a ``LiveStage``) as a variant and choose it; the one loaded before closes."""
        self.drop()
        self.user, self.user_chosen = live, True
        self.scene.checks.clear()

    def drop(self) -> None:
        """Unload the user's kernel (its watcher and sandbox close); the built-in variant runs."""
        if self.user is not None:
            self.user.close()
            self.scene.checks.clear()
        self.user, self.user_chosen = None, False

    def block_colors_available(self) -> bool:
        """Whether the view can colour items by the CUDA block that handled them now."""
        scene = self.scene
        return scene.spec.block_colors is not None and scene.gpu_kernels_run() and not scene.gpu_reason

    def user_runs(self) -> bool:
        """Whether the user's kernel does the scene's steps now: chosen, built and not failed, while the
        scene's GPU kernels run (it replaces one of them)."""
        return self.user_chosen and self.user is not None and self.user.runs and self.scene.gpu_kernels_run()

    def describe_check(self, item: int) -> list[tuple[str, str, str, str]]:
        """The last check's rows for ``item``: the user's kernel against the CPU twin while it does the steps,
        else the scene's own check (``Inspector.describe_check``)."""
        user = self.user
        return (
            user.describe_check(item)
            if user is not None and self.user_runs()
            else self.scene.inspector.describe_check(item)
        )

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
        before = self.options[name]
        self.options[name] = value
        if apply:
            self.apply(lambda: self.options.__setitem__(name, before))

    def apply(self, undo) -> None:
        """The knobs just set reach the GPU state. A kernel that does not compile takes the GPU off and the
        state on to the CPU (BackendUnavailable says why), whichever knob it was; anything else refused puts
        the knob back (``undo``) and raises."""
        scene = self.scene
        try:
            scene.apply_gpu_knobs()
        except GpuCompileError as exc:
            raise BackendUnavailable(scene.gpu_failed(exc)) from None
        except Exception:
            undo()
            raise
        scene.checks.clear()
