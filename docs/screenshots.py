"""Regenerate the pictures and clip of README.md and docs/ (headless: EGL, no display needed).

    python docs/screenshots.py gpu docs/     # the GPU pictures (needs a GPU with CUDA-GL interop)
    python docs/screenshots.py clip docs/    # t-drop.mp4: the t benchmark falling into the trough (CPU is fine)
    python docs/screenshots.py durbin docs/  # durbin-recursion.png and durbin-lpc.png (CPU is fine)
    python docs/screenshots.py heat docs/    # heat-painting.png (CPU is fine)
    python docs/screenshots.py heat-blocks docs/  # heat-blocks-temporal.png (needs a GPU)
    python docs/screenshots.py user-kernel docs/  # user-kernel-race.png (needs a GPU)

GPU pictures:
- gpu-block-colours-128.png, gpu-block-colours-512.png: the t benchmark coloured by the CUDA block
  whose thread handled each ball (grid variant), at two block sizes;
- gpu-verify-planted.png: verification on, with a z-sweep kernel built with a wrong margin (1.0
  instead of 1.1, a test-only compile option): the balls whose pairs differ are drawn red;
- gpu-pinned-mismatch.png: the same planted fault, one red ball on the pile's surface pinned: its
  window shows its values and, under verification, its partners on the GPU and on the CPU side by
  side with their difference;
- gpu-particles.png: 1M CS 267 particles after 200 steps on the GPU, coloured by speed, the top
  view zoomed in on the middle of the box so the discs show.

Durbin pictures (``python docs/screenshots.py durbin docs/``, the CPU is fine):
- durbin-recursion.png: the ar preset with two more reflection coefficients dragged in (AR(6)), the
  recursion at k = 5: y, the alphas reaching the yellow kappas, beta, and the order-5 model spectrum
  beside the AR(6) process's own and a realisation's periodogram;
- durbin-lpc.png: the lpc preset at order 16 on a frame of the /i/: spectrogram with the frame,
  its spectrum and LPC envelope, poles, reflection coefficients and error against order.

The clip: 4 s at 30 frames/s of the t drop (18 physics steps a frame: 1.5x real time), speed
colours over a fixed 0..20 units/s, 960x540, written through the same recorder as ``run --record``.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

import viewer  # noqa: E402, F401  first: picks NVIDIA's EGL before any context loads libEGL
from sim import create_scene  # noqa: E402
from sim.gpu import cuda
from viewer.headless import HeadlessRecording, render_image  # noqa: E402
from viewer.render.camera import OrbitCamera  # noqa: E402

CLIP_SIZE, CLIP_STEPS, CLIP_EVERY, CLIP_FPS = (960, 540), 2160, 18, 30


def planted_scene(frames: int = 90):
    """The t benchmark on the GPU with a z-sweep kernel built with a wrong margin, verification on."""
    with cuda.planted("sim/balls/proximity.cu", "-DPLANT_MARGIN=1.0f"):
        scene = create_scene("balls", preset="t", backend="gpu", variant="global")
    scene.set_verify(True)
    for _ in range(frames):
        scene.advance_frame()
    return scene


def pinned_picture(scene, candidates, path: Path, size=(1280, 800), color_mode: str = "speed") -> int | None:
    """Open the viewer (headless when there is no display), pin the first of ``candidates`` that the
    pointer reaches on top of the pile, and save the window with the pinned item's window open.
    Returns the pinned item, or None when none could be pinned."""
    from viewer.window.app import Viewer

    v = Viewer(scene, *size, visible=False, max_fps=None)
    try:
        v.controller.paused = True
        v.controller.set_color_mode(color_mode)
        for _ in range(3):
            v.tick()
        positions = v.view.points.feed
        fb = v.window.get_framebuffer_size()
        proj = v.camera.projection_matrix(fb[0] / fb[1], v.covered_right(fb) / fb[0])
        for item in candidates:
            sphere = positions.item_sphere(int(item))
            clip = proj @ v.camera.view_matrix() @ np.array([*sphere[:3], 1.0])
            ndc = clip[:3] / clip[3]
            width, height = v.window.get_size()
            v.pointing.pointer = ((ndc[0] + 1) / 2 * width, (ndc[1] + 1) / 2 * height)
            for _ in range(3):  # the pick answers a frame later
                v.tick()
            if v.pointing.picking.hovered == int(item):
                v.pointing.click = True
                v.tick()
                v.pointing.pointer = None
                for _ in range(3):
                    v.tick()
                v.actions.save_screenshot(fb, path)
                return int(item)
        return None
    finally:
        v.close()


def gpu_pictures(out: Path) -> None:
    for block in (128, 512):
        scene = create_scene("balls", preset="t", backend="gpu", variant="grid", block=block)
        for _ in range(90):
            scene.advance_frame()
        render_image(scene, out / f"gpu-block-colours-{block}.png", 1280, 800, color_mode="block")
    planted = planted_scene()
    report = planted.verification
    render_image(planted, out / "gpu-verify-planted.png", 1280, 800, color_mode="speed")
    print(
        f"planted margin 1.0: {report.differing} of {report.checked} balls differ "
        f"({report.details['pairs on the GPU']} GPU pairs vs {report.details['pairs on the CPU']} CPU)"
    )
    marked = np.flatnonzero(planted.mismatch)
    heights = planted.state()[0][marked, 1]
    pinned = pinned_picture(planted, marked[np.argsort(-heights)][:60], out / "gpu-pinned-mismatch.png")
    print(f"pinned ball: {pinned}" if pinned is not None else "no mismatched ball could be pinned: picture not made")
    particles = create_scene("particles", n=1_000_000, backend="gpu")
    for _ in range(20):
        particles.advance_frame()
    camera = OrbitCamera.top_view(particles.size, 0.01)
    camera.zoom(1 / 40)
    render_image(particles, out / "gpu-particles.png", 1280, 800, camera=camera, color_mode="speed")


def clip(out: Path) -> Path:
    scene = create_scene("balls", preset="t")
    scene.set_color_range("speed", (0.0, 20.0))
    recording = HeadlessRecording(scene, out / "t-drop.mp4", CLIP_SIZE, CLIP_EVERY, CLIP_FPS, color_mode="speed")
    try:
        for _ in range(CLIP_STEPS):
            scene.single_step()
            recording.after_step(scene)
    except BaseException:
        recording.abort()
        raise
    path = recording.stop()
    print(f"{path}: {recording.frames} frames, {path.stat().st_size / 1e6:.2f} MB")
    return path


def durbin_pictures(out: Path) -> None:
    from sim.contract import PointerEvent

    scene = create_scene("durbin")
    scene.set_param("p", 6)
    for i, kappa in ((4, 0.55), (5, -0.45)):
        scene.pointer(PointerEvent("point", float(i), kappa, target=f"kappa{i}"))
    for _ in range(4):
        scene.single_step()
    render_image(scene, out / "durbin-recursion.png", 1280, 800, color_mode="plain", panel=True)
    lpc = create_scene("durbin", preset="lpc")
    lpc.set_param("play", 0.0)
    lpc.pointer(PointerEvent("point", 0.72, 0.0, target="frame"))
    lpc.single_step()
    render_image(lpc, out / "durbin-lpc.png", 1280, 800, color_mode="plain", panel=True)
    print(f"durbin: k = {scene.solver.k} of {scene.r.size}, kappas {scene.kappas.tolist()}; lpc frame {lpc.frame}")


def main(argv: list[str]) -> None:
    import heat_pictures

    pictures = {
        "gpu": gpu_pictures,
        "clip": clip,
        "durbin": durbin_pictures,
        "heat": heat_pictures.painting,
        "heat-blocks": heat_pictures.blocks,
        "user-kernel": heat_pictures.user_kernel,
    }
    what = argv[0] if argv else "gpu"
    out = Path(argv[1] if len(argv) > 1 else "docs")
    if what not in pictures:
        raise SystemExit(f"usage: python docs/screenshots.py {'|'.join(pictures)} [FOLDER] (not {what!r})")
    out.mkdir(parents=True, exist_ok=True)
    pictures[what](out)


if __name__ == "__main__":
    main(sys.argv[1:])
