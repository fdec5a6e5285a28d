// The grid's setup for a pass (grid.cuh's Grid): one block, after the live balls' bounds. Its twin is
// grid_setup_cpu.grid_shape, bit for bit. -D options from kernels.py: SETUP_THREADS (the block), SETUP_SAMPLES (the
// balls sampled), SETUP_BINS (a histogram's bins), TRIM_SHIFTS, FAST_SHIFT and SPLIT_GAIN (below).
//
// Cells are at the predicate's reach: 2 * margin * (largest radius) + 2 * T * (fastest speed), 1% to spare.
// Two things can make them far coarser than most balls need, and a sample of the balls (every one below
// SETUP_SAMPLES, a stride above) tells the setup where:
// - A few balls much faster than the rest (a splash) set every ball's reach. Where the speed alone could
//   make the cells SPLIT_GAIN of their side or less, the setup takes the speed squared above which at
//   most live >> FAST_SHIFT of the sampled live balls lie; if the slow balls' cells would be that much
//   smaller, the grid splits: fine cells at the slow balls' reach, and the fast balls in coarse cells of
//   the full reach over the same box (grid_fast.cuh).
// - Balls splashed far from the heap stretch the box past max_cells cells. The setup then trims it: per
//   axis, the end bins of the sample's histogram that hold at most live >> shift of its live balls, shift
//   from TRIM_SHIFTS, the least trim that fits. Balls beyond the box count in its boundary cells
//   (cell_of clamps), which keeps every pair in neighbouring cells: clamping never moves two cells
//   further apart. Only where even the most trimmed box does not fit do the cells grow (by 1.25).
#pragma once

// The box's cells at side `cell`, or max_cells + 1 past max_cells (dims then left unset).
__device__ long long box_cells(const float lo[3], const float hi[3], float cell, long long max_cells, int dims[3])
{
    long long total = 1;
    for (int a = 0; a < 3; ++a) {
        long long d = (long long)((hi[a] - lo[a]) / cell) + 1;
        if (d > max_cells || (total *= d) > max_cells) return max_cells + 1;
        dims[a] = (int)d;
    }
    return total;
}

// A sample's bin from its value, the histogram's low end and bins per unit (NaN to bin 0, beyond to the ends).
__device__ __forceinline__ int sample_bin(float x, float lo, float scale)
{
    float f = (x - lo) * scale;
    return f >= 1.f ? (int)fminf(f, (float)(SETUP_BINS - 1)) : 0;
}

__device__ __forceinline__ float cell_side(float reach) { return reach * 1.01f + 1e-6f; }  // 1% for rounding
__device__ __forceinline__ float speed_bound_of(float speed2) { return 2.f * sqrtf(speed2) * 1.0001f + 1e-18f; }

extern "C" __global__ void __launch_bounds__(SETUP_THREADS) grid_setup(const float4* pos, const float4* vel, int n,
                                                                       float fallen_y, const int* bounds, float t,
                                                                       float margin, long long max_cells, Grid* grid)
{
    __shared__ int hist[4][SETUP_BINS];  // x, y, z, speed squared
    __shared__ int live;
    float lo[3], hi[3];
    for (int a = 0; a < 3; ++a) { lo[a] = unordered(bounds[a]); hi[a] = unordered(bounds[3 + a]); }
    float max_radius = unordered(bounds[6]), fastest2 = unordered(bounds[7]);
    float rest = 2.f * MARGIN(margin) * max_radius;  // the reach of two balls at rest
    float full = cell_side(rest + 2.f * t * sqrtf(fastest2));
    Grid g = {lo[0], lo[1], lo[2], full, 1, 1, 1, speed_bound_of(fastest2), max_radius, 2, INF, 0.f, 0, 0, 0};
    if (!(lo[0] <= hi[0])) {  // no live balls
        if (threadIdx.x == 0) { g.ox = g.oy = g.oz = 0.f; g.cell = 1.f; *grid = g; }
        return;
    }
    int dims[3];
    bool may_split = cell_side(rest) < SPLIT_GAIN * full;
    if (may_split || box_cells(lo, hi, full, max_cells, dims) > max_cells) {  // the same for every thread
        for (int b = threadIdx.x; b < 4 * SETUP_BINS; b += blockDim.x) hist[b / SETUP_BINS][b % SETUP_BINS] = 0;
        if (threadIdx.x == 0) live = 0;
        __syncthreads();
        float scale[4];
        for (int a = 0; a < 3; ++a) scale[a] = hi[a] > lo[a] ? (float)SETUP_BINS / (hi[a] - lo[a]) : 0.f;
        scale[3] = fastest2 > 0.f ? (float)SETUP_BINS / fastest2 : 0.f;
        int samples = min(n, SETUP_SAMPLES);
        for (int k = threadIdx.x; k < samples; k += blockDim.x) {
            long long at = (long long)k * n / samples;
            float4 p = pos[at], u = vel[at];
            if (!(p.y >= fallen_y)) continue;
            atomicAdd(&live, 1);
            atomicAdd(&hist[0][sample_bin(p.x, lo[0], scale[0])], 1);
            atomicAdd(&hist[1][sample_bin(p.y, lo[1], scale[1])], 1);
            atomicAdd(&hist[2][sample_bin(p.z, lo[2], scale[2])], 1);
            atomicAdd(&hist[3][sample_bin(speed_squared(u), 0.f, scale[3])], 1);
        }
        __syncthreads();
        if (threadIdx.x != 0) return;
        if (may_split) {  // the top speed bins holding at most live >> FAST_SHIFT of the sample are fast
            int last = SETUP_BINS - 1, cut = 0, allowed = live >> FAST_SHIFT;
            while (last > 0 && cut + hist[3][last] <= allowed) cut += hist[3][last--];
            float fast2 = fastest2 / (float)SETUP_BINS * (float)(last + 1);
            float fine = cell_side(rest + 2.f * t * sqrtf(fast2));
            if (last < SETUP_BINS - 1 && fine < SPLIT_GAIN * full) {
                g.cell = fine;
                g.speed_bound = speed_bound_of(fast2);
                g.fast2 = fast2;
                g.coarse = full;
            }
        }
        if (box_cells(lo, hi, g.cell, max_cells, dims) > max_cells) {
            const int shifts[] = {TRIM_SHIFTS};
            float box_lo[3], box_hi[3];
            for (int s = 0; s < (int)(sizeof(shifts) / sizeof(shifts[0])); ++s) {
                int allowed = live >> shifts[s];
                for (int a = 0; a < 3; ++a) {
                    int first = 0, last = SETUP_BINS - 1, cut = 0;
                    while (first < last && cut + hist[a][first] <= allowed) cut += hist[a][first++];
                    cut = 0;
                    while (last > first && cut + hist[a][last] <= allowed) cut += hist[a][last--];
                    float width = (hi[a] - lo[a]) / (float)SETUP_BINS;
                    box_lo[a] = first == 0 ? lo[a] : lo[a] + width * (float)first;
                    box_hi[a] = last == SETUP_BINS - 1 ? hi[a] : fminf(lo[a] + width * (float)(last + 1), hi[a]);
                }
                if (box_cells(box_lo, box_hi, g.cell, max_cells, dims) <= max_cells) break;
            }
            for (int a = 0; a < 3; ++a) { lo[a] = box_lo[a]; hi[a] = box_hi[a]; }
        }
    } else if (threadIdx.x != 0) {
        return;
    }
    while (box_cells(lo, hi, g.cell, max_cells, dims) > max_cells) g.cell *= 1.25f;
    g.ox = lo[0]; g.oy = lo[1]; g.oz = lo[2];
    g.nx = dims[0]; g.ny = dims[1]; g.nz = dims[2];
    g.cells = dims[0] * dims[1] * dims[2] + 1;
    if (g.coarse > 0.f) {  // no finer than the fine cells: no more cells than they have
        g.coarse = fmaxf(g.coarse, g.cell);
        box_cells(lo, hi, g.coarse, max_cells, dims);
        g.cx = dims[0]; g.cy = dims[1]; g.cz = dims[2];
        g.cells += dims[0] * dims[1] * dims[2];
    }
    *grid = g;
}
