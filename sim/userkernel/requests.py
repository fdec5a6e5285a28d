"""What ``template``, ``check`` and ``bench --kernel-file`` are asked to do, as parsed (``arguments``'s
``add_*_arguments``): frozen dataclasses, the commands' only input."""

from __future__ import annotations

from dataclasses import dataclass

Block = int | tuple[int, int]


@dataclass(frozen=True)
class TemplateRequest:
    """``template SCENE [STAGE]``: the stage's starting point, printed or written to ``output``."""

    scene: str
    stage: str | None
    output: str | None
    force: bool


@dataclass(frozen=True)
class KernelRequest:
    """What ``check`` and ``bench --kernel-file`` both take: the kernel, its stage and launch, the output."""

    scene: str
    kernel_file: str
    stage: str | None
    block: Block | None
    repeats: int
    time_limit: float
    json: str | None
    baseline: dict | None


@dataclass(frozen=True)
class KernelBenchRequest(KernelRequest):
    """``bench SCENE --kernel-file FILE``: the kernel timed beside the built-in variants."""


@dataclass(frozen=True)
class CheckRequest(KernelRequest):
    """``check SCENE --kernel-file FILE``: the kernel graded against the CPU twin (or run once under
    compute-sanitizer: ``sanitize``, the tool), and what the compiler made of it written out (``ptx``,
    ``sass``)."""

    sizes: list[int] | None
    seeds: int
    sanitize: str | None
    ptx: str | None  # write the PTX here
    sass: str | None  # write the SASS here
