"""Every distance-histogram kernel against the CPU, exactly (run with pytest -m gpu on a GPU machine)."""

import numpy as np
import pytest

from sim.sdh import data, sdh_cpu

pytestmark = pytest.mark.gpu

KERNELS = ["naive", "naive-priv", "tiled", "tiled-priv", "fast", "tensor"]
TENSOR = ["tensor"]


def case(n, width, source):
    if source == "course":
        points = data.atoms(n)
    elif source == "corners":  # far-corner pairs past the course's bucket count, and a coincident pair
        rng = np.random.default_rng()
        points = rng.uniform(0, 23000, (n, 3))
        points[:4] = [[0, 0, 0], [23000, 23000, 23000], [23000, 23000, 23000], [0, 23000, 0]]
    else:
        points = np.random.default_rng().uniform(0, 23000, (n, 3))
    buckets = data.bucket_count(width)
    return points, buckets, sdh_cpu.histogram(points, width, buckets)


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("block", [32, 100, 256, 1024])
@pytest.mark.parametrize(
    "n, width, source",
    [
        (2, 500.0, "course"),
        (77, 500.0, "random"),
        (5000, 500.0, "course"),
        (3001, 1.0, "corners"),
        (4099, 137.5, "random"),
        (2500, 3.0, "corners"),
    ],
)
def test_kernel_equals_the_cpu(kernel, block, n, width, source):
    from sim.sdh import gpu

    if (kernel == "fast" or kernel in TENSOR) and block % 32:
        with pytest.raises(gpu.KernelError, match="multiple of 32"):
            gpu.launch_shape(kernel, n, block, data.bucket_count(width))
        return
    points, buckets, expected = case(n, width, source)
    try:
        counts, ms = gpu.histogram(points, width, buckets, kernel, block)
    except gpu.KernelError as exc:  # a per-block histogram that does not fit in shared memory
        assert kernel.endswith("priv") or kernel == "fast" or kernel in TENSOR
        # the tensor kernels count per integer of the squared distance: (buckets + 1)^2 counters
        needed = (buckets + 1) ** 2 * 4 if kernel in TENSOR else buckets * 4
        assert "shared memory" in str(exc) and needed > 48 * 1024
        return
    np.testing.assert_array_equal(counts, expected)
    assert counts.sum() == n * (n - 1) // 2 and ms > 0


@pytest.mark.parametrize("kernel", ["fast", *TENSOR])
def test_fast_kernel_rechecks_pairs_on_a_bucket_edge(kernel):
    """Pairs placed within a few float64 ulps of an edge: float32 alone would misplace some."""
    from sim.sdh import gpu

    rng = np.random.default_rng()
    m = 2000
    centre = rng.uniform(5000, 18000, (m, 3))
    u = rng.normal(size=(m, 3))
    u /= np.linalg.norm(u, axis=1)[:, None]
    edge = 500.0 * rng.integers(1, 20, m)
    d = edge * (1 + rng.integers(-3, 4, m) * 2.0**-52)
    points = np.concatenate([centre, centre + u * d[:, None]])
    buckets = data.bucket_count(500.0)
    counts, _ = gpu.histogram(points, 500.0, buckets, kernel, 256)
    np.testing.assert_array_equal(counts, sdh_cpu.histogram(points, 500.0, buckets))


@pytest.mark.parametrize("kernel", TENSOR)
@pytest.mark.parametrize("block", [32, 256, 1024])
@pytest.mark.parametrize("width", [500.0, 300.0])
def test_tensor_kernel_on_edges_corners_and_whole_tiles(kernel, block, width):
    """Pairs on and beside edges (exact 3-4-5 distances, a few ulps off), far corners and coincident
    atoms, and enough atoms for full tiles past the block's own; W = 500 tests for a whole squared
    distance with one add (-DONE_ADD), W = 300 with three."""
    from sim.sdh import gpu, squares
    from tests.test_sdh_squares import edge_pairs

    rng = np.random.default_rng()
    points = np.concatenate([edge_pairs(800, width, rng), rng.uniform(0, 23000, (4 * block + 5, 3))])
    points[-4:] = [[0, 0, 0], [23000, 23000, 23000], [23000, 23000, 23000], [0, 23000, 0]]
    assert squares.one_add(squares.inputs(points, width)[3]) == (width == 500.0)
    buckets = data.bucket_count(width)
    counts, _ = gpu.histogram(points, width, buckets, kernel, block)
    np.testing.assert_array_equal(counts, sdh_cpu.histogram(points, width, buckets))


def test_the_command_defaults_to_the_fastest_kernel_that_can_run_at_the_width():
    """``sdh N W --backend gpu`` without --kernel: tensor where its counters fit this GPU, else fast."""
    from sim.sdh import cli as sdh_cli
    from sim.sdh import gpu, kernels

    limit = gpu.cupy.cuda.runtime.getDeviceProperties(0)["sharedMemPerBlockOptin"]
    narrow = kernels.tensor_min_width(256, limit)
    assert sdh_cli.default_kernel(100_000, data.bucket_count(500.0), 256) == "tensor"
    assert sdh_cli.default_kernel(100_000, data.bucket_count(narrow * 0.98), 256) == "fast"
    assert sdh_cli.default_kernel(100_000, data.bucket_count(500.0), 100) == "fast"  # whole warps: fast says why
