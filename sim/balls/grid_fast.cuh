// The fast balls' pairs where the grid is split (grid_setup.cuh; Grid.coarse > 0), after sweep has listed
// every slow ball's slow partners. Part of proximity.cu's VARIANT_GRID build, as grid.cuh.
//
// Any pair with a fast ball closes at most 2 * (the fastest speed) in the lifetime, so its balls lie in
// neighbouring cells of the coarse grid (cells of the full reach), which holds the fast balls alone:
// every ball tests the fast balls of its 27 coarse cells. A fast ball also tests the slow balls of the fine
// cells within its own reach of them (its speed and the slow balls' largest, sqrt(fast2), 1% to spare):
// each side of a pair finds the other, so each ball still writes only its own list, no atomics, and the
// pairs are the predicate's, bit for bit (in_proximity, as the sweep rounds it).
#pragma once

// Ball i (at p9, moving v9) tested against the cell-sorted balls j0 .. end - 1: its partners go on its own list.
// A fine run never holds i itself (a fast ball is in a coarse cell), a coarse run may.
__device__ __forceinline__ void test_run(int j0, int end, int i, float4 p9, float4 v9, const float4* __restrict__ pos,
                                         const float4* __restrict__ vel, float t, float margin, int k, int stride,
                                         int* partners, int& found, unsigned long long& tests)
{
    for (int j = j0; j < end; ++j) {
        if (j == i) continue;
        ++tests;
        if (in_proximity(pos[j], vel[j], p9, v9, t, margin)) {
            if (found < k) partners[(size_t)found * stride + i] = j;
            ++found;
        }
    }
}

// Where the grid is not split every thread returns at once: a launch of a few blocks a pass.
extern "C" __global__ void __launch_bounds__(BLOCK) sweep_fast(const float4* __restrict__ pos,
                                                               const float4* __restrict__ vel,
                                                               const Grid* __restrict__ grid,
                                                               const int* __restrict__ cell_start, int n, float t,
                                                               float margin, float fallen_y, int k, int stride,
                                                               int* count, int* partners, unsigned long long* summary)
{
    const Grid g = *grid;
    if (!(g.coarse > 0.f)) return;  // the same for every thread
    int fine = g.nx * g.ny * g.nz, fast_first = cell_start[fine];
    unsigned long long tests = 0, pairs = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        float4 p9 = pos[i];
        if (!(p9.y >= fallen_y)) continue;
        bool fast = i >= fast_first;
        float4 v9 = vel[i];
        int listed = fast ? 0 : count[i], found = listed;  // a slow ball's slow partners are listed already
        int3 c = coarse_cell_of(p9, g);
        for (int z = max(c.z - 1, 0); z <= min(c.z + 1, g.cz - 1); ++z)
            for (int y = max(c.y - 1, 0); y <= min(c.y + 1, g.cy - 1); ++y) {
                int row = fine + (z * g.cy + y) * g.cx;
                int end = cell_start[row + min(c.x + 1, g.cx - 1) + 1];
                test_run(cell_start[row + max(c.x - 1, 0)], end, i, p9, v9, pos, vel, t, margin, k, stride, partners,
                         found, tests);
            }
        if (fast) {
            float slow_reach = MARGIN(margin) * (p9.w + g.max_radius) + t * (sqrtf(speed_squared(v9)) + sqrtf(g.fast2));
            float cells = fminf(ceilf((slow_reach * 1.01f + 1e-6f) / g.cell), (float)max(g.nx, max(g.ny, g.nz)));
            int r = cells >= 1.f ? (int)cells : 1;  // NaN: one
            int3 q = cell_of(p9, g);
            int x0 = max(q.x - r, 0), x1 = min(q.x + r, g.nx - 1);
            for (int z = max(q.z - r, 0); z <= min(q.z + r, g.nz - 1); ++z)
                for (int y = max(q.y - r, 0); y <= min(q.y + r, g.ny - 1); ++y) {
                    int end = cell_start[cell_index(x1, y, z, g) + 1];
                    test_run(cell_start[cell_index(x0, y, z, g)], end, i, p9, v9, pos, vel, t, margin, k, stride,
                             partners, found, tests);
                }
        }
        if (found > k) atomicMax(&summary[LONGEST], (unsigned long long)found);
        count[i] = found;
        pairs += found - listed;
    }
    add_totals(summary, tests, pairs);
}
