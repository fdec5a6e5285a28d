"""Regenerate the README's GPU pictures (needs a GPU with CUDA-GL interop; runs headless through EGL).

    python docs/screenshots.py docs/

- gpu-block-colours-128.png, gpu-block-colours-512.png: the t benchmark coloured by the CUDA block
  whose thread handled each ball (grid variant), at two block sizes;
- gpu-verify-planted.png: verification on, with a z-sweep kernel built with a wrong margin (1.0
  instead of 1.1, a test-only compile option): the balls whose pairs differ are drawn red;
- gpu-particles.png: 1M CS 267 particles after 200 steps on the GPU, coloured by speed, the top
  view zoomed in on the middle of the box so the discs show.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sim import create_scene  # noqa: E402
from viewer.camera import OrbitCamera  # noqa: E402
from viewer.headless import render_png  # noqa: E402


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for block in (128, 512):
        scene = create_scene("balls", preset="t", backend="gpu", variant="grid", block=block)
        for _ in range(90):
            scene.advance_frame()
        render_png(scene, out / f"gpu-block-colours-{block}.png", 1280, 800, color_mode="block")
    planted = create_scene("balls", preset="t", backend="gpu", variant="global",
                           kernel_options=("-DPLANT_MARGIN=1.0f",))
    planted.set_verify(True)
    for _ in range(90):
        planted.advance_frame()
    report = planted.verification
    render_png(planted, out / "gpu-verify-planted.png", 1280, 800, color_mode="speed")
    particles = create_scene("particles", n=1_000_000, backend="gpu")
    for _ in range(20):
        particles.advance_frame()
    camera = OrbitCamera.top_view(particles.size, 0.01)
    camera.zoom(1 / 40)
    render_png(particles, out / "gpu-particles.png", 1280, 800, camera=camera, color_mode="speed")
    print(f"planted margin 1.0: {report['differing']} of {planted.n} balls differ "
          f"({report['pairs_gpu']} GPU pairs vs {report['pairs_cpu']} CPU)")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "docs"))
