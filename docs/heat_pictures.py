"""The heat scene's pictures for README.md and docs/, made by ``docs/screenshots.py heat`` and ``heat-blocks``:

- heat-painting.png: the plate preset (cold plate, edges held at 0, hot discs), painted with the
  paint tool as the viewer does it: a hot wave drawn left to right (left drag) and a cold stroke
  (right drag) across the largest disc, then 100 steps of diffusion; the panel on the right.
- heat-blocks-temporal.png: the same strokes on the GPU with the temporal kernel (k 7, 32x8 blocks)
  in CUDA block colouring: the tiles one launch covers the field with outlined, the halo each tile
  re-reads from its neighbours (k rows, whole float4s of columns) tinted, zoomed in on the wave.
"""

import math
from pathlib import Path

from sim import create_scene
from sim.contract import BLOCK_COLORS, PointerEvent
from viewer.headless import render_image
from viewer.render.camera import OrbitCamera

SIZE = (1280, 800)


def drag(scene, points, button: str) -> None:
    """A drag through ``points`` (fractions of the grid), as the viewer hands it to the scene."""
    xs = [(x * scene.ni, y * scene.nj) for x, y in points]
    scene.pointer(PointerEvent("press", *xs[0], button=button))
    for x, y in xs[1:]:
        scene.pointer(PointerEvent("drag", x, y, button=button))
    scene.pointer(PointerEvent("release", *xs[-1], button=button))


def painted(scene, frames: int = 5):
    """The plate with a hot wave and a cold stroke, then ``frames`` frames of diffusion."""
    scene.set_tool_value("radius", scene.ni / 90)
    scene.set_tool_value("temperature", 100.0)
    wave = [(0.08 + 0.84 * t / 40, 0.5 + 0.12 * math.sin(t / 40 * 3 * math.pi)) for t in range(41)]
    drag(scene, wave[::4], "left")  # a fast stroke: ten drag events, no gaps
    scene.set_tool_value("radius", scene.ni / 70)
    drag(scene, [(0.50, 0.18), (0.74, 0.42)], "right")
    for _ in range(frames):
        scene.advance_frame()
    return scene


def painting(out: Path) -> Path:
    scene = painted(create_scene("heat", preset="plate"))
    path = render_image(scene, out / "heat-painting.png", *SIZE, panel=True)
    print(f"{path}: {scene.ni}x{scene.nj} plate on the {scene.backend.upper()}, {scene.steps} steps")
    return path


def blocks(out: Path) -> Path:
    scene = painted(
        create_scene("heat", preset="plate", n=1_000_000, backend="gpu", variant="temporal", block=(32, 8), k="7")
    )
    scene.finish()
    tiles = scene.gpu.tiles()
    camera = OrbitCamera.plan_view((0.0, 0.0, float(scene.ni), float(scene.nj)), 1.0)
    camera.zoom(0.3)
    path = render_image(
        scene, out / "heat-blocks-temporal.png", *SIZE, camera=camera, color_mode=BLOCK_COLORS, panel=True
    )
    print(
        f"{path}: tiles of {tiles.tile_w}x{tiles.tile_h} cells, halo {tiles.halo_left} left, "
        f"{tiles.halo_right} right, {tiles.halo_y} rows; grid {tiles.grid[0]}x{tiles.grid[1]} blocks"
    )
    return path


RACE = Path(__file__).resolve().parent.parent / "tests" / "data" / "user_kernels" / "heat_tile_race.cu"
FOLDED = (
    "Scene",
    "Run",
    "Colour",
    "Physics",
    "Tool",
    "Stage times (ms per frame)",
    "Display",
    "Record",
    "Counters",
    "Pair distances",
    "Speed of light",
)


def user_kernel(out: Path, frames: int = 12) -> None:
    """user-kernel-race.png: tests/data/user_kernels/heat_tile_race.cu (a shared-memory tile read without its
    barrier) as the plate's step kernel on the GPU, verification on, as ``view heat --kernel-file`` runs it:
    the cells it got wrong in red, the panel's "Your kernel" section with the mismatch table and the step
    where it first diverged from the CPU twin. Needs a GPU."""
    import time

    from sim.userkernel import source
    from viewer.panel import style
    from viewer.window.app import Viewer

    scene = create_scene("heat", preset="plate", backend="gpu")
    scene.set_param("steps_per_frame", 1)
    scene.set_verify(True)
    for title in FOLDED:  # the kernel's section in view
        style.layout[title] = False
    v = Viewer(scene, *SIZE, visible=False, max_fps=None)
    try:
        v.controller.kernel.use(source.load(RACE, scene.spec, "step"))
        live = v.controller.kernel.live
        started = time.perf_counter()
        while live.build is None and time.perf_counter() - started < 60:  # compiled in the background
            v.tick()
        for _ in range(frames):
            v.tick()
        fb = v.window.get_framebuffer_size()
        v.actions.save_screenshot(fb, out / "user-kernel-race.png")
        comparison = live.comparison
        print(
            f"user kernel: {live.steps_run} steps, first diverged at {live.first_divergence}, "
            f"{comparison.mismatches if comparison else '?'} cells wrong in the last; error {live.error}"
        )
    finally:
        v.close()
