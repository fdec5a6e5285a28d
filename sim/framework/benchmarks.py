"""The benchmark declarations of the scene contract (re-exported by ``sim.contract``): ``Bench`` (how ``bench
SCENE`` runs a scene) and its cases, the regression gate's runs and figures and the Nsight Compute cases."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sim.contract import SceneSpec

# --- the benchmark (``SceneSpec.bench``) ---------------------------------------------------------------------------
TIMED_FRAMES = "sim.cmdline.timed_frames:BENCH"  # the benchmark every scene has unless it declares its own


@dataclass(frozen=True)
class Bench:
    """``bench SCENE``: how a scene is benchmarked, one interface for every scene. ``SceneSpec.bench`` names it; the
    default, ``TIMED_FRAMES``, builds every configuration of the comma-separated presets, counts, variants, blocks and
    options and times its frames headless. A scene whose benchmark is more (heat's kernel x block x k sweep against
    the copy floor, sdh's histogram kernels, durbin's single and batched systems beside scipy) declares its own.

    ``add_arguments(parser, scene, positional)`` adds the bench's options (and, ``positional``, the scene's name;
    --json, --baseline and --quiet are the command's own); ``request`` is the frozen dataclass the parsed arguments
    fill (``sim.cmdline.from_args.request_of``). ``run(request)`` times in one process and returns the exit code;
    ``over_ranks(request, spec)`` runs the same request under ``mpiexec -n R`` as strong and weak scaling over the
    ranks (``sim.mpi.bench``; None: the bench runs in one process only)."""

    add_arguments: Callable[[argparse.ArgumentParser, str, bool], None]
    request: type
    run: Callable[[Any], int]
    over_ranks: Callable[[Any, SceneSpec], int] | None = None


# --- benchmark cases (``SceneSpec.gate``, ``SceneSpec.ncu``): what bench/regress.py and bench/ncu_models.py run
Fields = tuple[tuple[str, Any], ...]  # (name, value) pairs


@dataclass(frozen=True)
class GateFigure:
    """A headline figure the regression gate reads from its run's report: the fastest record that holds
    ``record`` (and ran with ``options``)."""

    name: str  # "balls 10M grid, ms/step": the gate's table and bench/results/<model>-regress.json
    value: str  # the record's field that holds the figure ("step_ms"); its 95% half-width is "<value>_err"
    record: Fields  # the fields a record of the configuration holds, compared for equality
    options: Fields = ()  # the scene options it ran with ("options" in a record; one it does not name: the default)
    scale: float = 1.0  # the figure's unit per the record's (s to ms: 1e3)
    peer: Fields = ()  # the fields of the peer's record of the same work (none: no peer)
    peer_value: str = ""  # the peer record's field, in the record's unit (times ``scale`` too)


@dataclass(frozen=True)
class GatePeer:
    """A peer's script (outside the repository) timed beside the product by bench/peer.py."""

    label: str  # "peer balls 10M": the gate's log
    script: str  # "peer_balls.py", in the peers' folder
    args: tuple[str, ...]


@dataclass(frozen=True)
class GateRun:
    """One run of the regression gate: the scene's bench (``main.py bench <scene> ARGS``) or the viewer's frame
    bench (``python -m viewer.bench.frame ARGS``, run in several processes: the best counts), and the headline
    figures read from its report."""

    label: str  # "balls 10M grid": the gate's log
    args: tuple[str, ...]  # the bench's arguments, without --json
    figures: tuple[GateFigure, ...]
    frame: bool = False  # the frame bench (its records' workload: "frame")
    report: str = ""  # the report's name in the gate's folder (<report>.json); default the scene's name
    peer: GatePeer | None = None


@dataclass(frozen=True)
class NcuCase:
    """A GPU stage's headline configuration with one window of the stage profiled by Nsight Compute, for its
    model's bytes and arithmetic beside ncu's counts (bench/ncu_models.py)."""

    stage: str  # the stage whose model (``SceneSpec.models``) is compared
    preset: str = ""
    count: int = 0
    variant: str = ""
    block: Any = None
    steps: int = 1  # steps a frame
    window: int = 1  # the steps one profiled window covers (the model's ``sim.gpu.roofline.Setup``)
    options: Fields = ()  # construction options (``Option``)
    toggles: tuple[tuple[str, bool], ...] = ()
    params: tuple[tuple[str, float], ...] = ()
    whole_frame: bool = False  # the scene adds the stage's time itself: a whole frame is profiled
    name: str = ""  # the case's name after "<scene>." (default the stage's)
    # or a window of the case's own: "module:function", f(profiled) -> sim.gpu.roofline.StageModel, where
    # ``profiled(True)`` is a context manager around the profiled launches
    profile: str = ""

    @property
    def id(self) -> str:
        return self.name or self.stage
