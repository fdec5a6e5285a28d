"""The CUDA builds of the viewer's renderers, declared where ``sim`` lists every build of the product
(``sim.registry.all_builds``, compiled by the NVRTC check) without importing the viewer and its GL."""

from __future__ import annotations

from sim.gpu.cuda import Build

SPLAT = Build("viewer/render/points/splat.cu", (), ("splat_balls",))  # viewer/render/points/splat.py
# viewer/pick/device.py; --fmad=false: rounds as its twin, viewer/pick/ray.py
RAY_TEST = Build("viewer/pick/raytest.cu", ("--fmad=false",), ("nearest_hit", "first_of_nearest"))


def builds() -> list[Build]:
    return [SPLAT, RAY_TEST]
