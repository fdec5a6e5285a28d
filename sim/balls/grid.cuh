// The grid variant of the proximity pass: part of proximity.cu's VARIANT_GRID build (it uses that
// file's predicate, totals and summary slots), in a file of its own for its length.
#pragma once

#include "balls/bounds.cuh"
#include "common/scan.cuh"

// A dense grid over the live balls' bounding box (trimmed where balls splashed far: grid_setup.cuh):
// cubic cells of side >= the predicate's largest reach, numbered x fastest, so the three cells of a
// row are adjacent in the sorted order and a ball's 27 neighbour cells are nine contiguous runs.
// Where a few balls are much faster than the rest (a splash), the grid splits: the slow balls' cells
// are sized by the slow balls' speed, and the fast ones go to a coarse grid of their own over the same
// box, cells of the full reach (grid_fast.cuh finds their pairs). Then the coarse cells follow the
// fine ones; the last cell holds fallen balls, sorted last.
struct Grid {
    float ox, oy, oz, cell;
    int nx, ny, nz;
    float speed_bound;  // >= the relative speed of every pair the fine cells hold, as the predicate rounds it
    float max_radius;   // of the live balls
    int cells;          // nx * ny * nz (+ cx * cy * cz) + 1 (the fallen balls' cell): the counts the scan covers
    float fast2;        // a ball whose speed squared is above this is fast (INF: no split)
    float coarse;       // the coarse cells' side, >= the full reach (0: no split)
    int cx, cy, cz;
};

// The speed bound: a pair whose distance minus T * speed_bound already exceeds its reach is rejected
// before its velocity is loaded. Exact, not a heuristic: the predicate's speed is <= speed_bound,
// and float rounding is monotone, so fl(dist - fl(T*speed)) >= fl(dist - fl(T*speed_bound)) > reach.
// speed_bound = 2 * (the fastest live ball's speed) * (1 + 1e-4) + 1e-18: the relative slack is far
// above the few roundings of the speeds (~1e-6), the absolute one above any underflowed square. Where
// the grid is split the fine cells hold slow balls alone, and the fastest of them is sqrt(fast2).
//
// The distance bound: most candidates are rejected from their squared distance alone, before the
// square root (the search is bound by its instructions). A candidate j (r_j <= max_radius) can pass
// only if fl(fl(sqrt(d2)) - far) <= fl(margin * fl(r_i + r_j)), which needs
// sqrt(d2) <= (margin * (r_i + max_radius) + far) * (1 + 3e-7) in exact arithmetic (a few roundings
// of 2^-24 each). beyond2 is that bound with 1e-5 to spare, squared in double: d2 > beyond2 rejects
// only pairs the exact predicate rejects; the others take the exact test, so the pairs are the same
// bit for bit.

// bounds[]: min x, y, z, max x, y, z, max radius, max speed squared (of live balls), as ordered ints.
// A grid-stride loop over a few blocks per SM, reduced per block: a handful of atomics in all.
extern "C" __global__ void grid_bounds(const float4* pos, const float4* vel, int n, float fallen_y, int* bounds)
{
    float box[8];
    bounds_empty(box);
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        bounds_add(box, pos[i], vel[i], fallen_y);
    bounds_commit(box, bounds);
}

// The cell of side `side` over the grid's box that p falls in, clamped to the box's nx x ny x nz cells.
__device__ __forceinline__ int3 clamped_cell(float4 p, const Grid& g, float side, int nx, int ny, int nz)
{
    return make_int3(min(max((int)floorf((p.x - g.ox) / side), 0), nx - 1),
                     min(max((int)floorf((p.y - g.oy) / side), 0), ny - 1),
                     min(max((int)floorf((p.z - g.oz) / side), 0), nz - 1));
}

__device__ __forceinline__ int3 cell_of(float4 p, const Grid& g)
{
    return clamped_cell(p, g, g.cell, g.nx, g.ny, g.nz);
}

__device__ __forceinline__ int cell_index(int x, int y, int z, const Grid& g) { return (z * g.ny + y) * g.nx + x; }

__device__ __forceinline__ int3 coarse_cell_of(float4 p, const Grid& g)
{
    return clamped_cell(p, g, g.coarse, g.cx, g.cy, g.cz);
}

__device__ __forceinline__ float speed_squared(float4 u) { return u.x * u.x + u.y * u.y + u.z * u.z; }

// A ball's cell: the fine cell its position falls in, the coarse one for a fast ball, or the fallen balls'.
// The velocity is read only where the grid is split.
__device__ __forceinline__ int ball_cell(float4 p, const float4* vel, int i, const Grid& g, float fallen_y)
{
    if (p.y < fallen_y) return g.cells - 1;
    if (g.coarse > 0.f && speed_squared(vel[i]) > g.fast2) {
        int3 q = coarse_cell_of(p, g);
        return g.nx * g.ny * g.nz + (q.z * g.cy + q.y) * g.cx + q.x;
    }
    int3 q = cell_of(p, g);
    return cell_index(q.x, q.y, q.z, g);
}

// Counting sort, step 1: each ball's rank inside its cell (the atomic's old value).
extern "C" __global__ void grid_count(const float4* pos, const float4* vel, int n, const Grid* grid, float fallen_y,
                                      int* rank, int* cell_count, unsigned long long* summary)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const Grid g = *grid;
    float4 p = pos[i];
    if (p.y < fallen_y) atomicAdd(&summary[FALLEN], 1ull);
    rank[i] = atomicAdd(&cell_count[ball_cell(p, vel, i, g, fallen_y)], 1);
}

// Step 3, after the prefix sum of the counts (cell c's balls go to cell_start[c] .. cell_start[c + 1]):
// move each ball's position to its sorted place k, and note order[k] = i. Only the positions move
// here; the search, bound by its instructions, not its bytes, moves the rest on its way (sweep).
// The cell is found again from the position (grid_count's arithmetic), cheaper than storing it.
extern "C" __global__ void grid_scatter(const Grid* grid, float fallen_y, const int* rank, const int* cell_start,
                                        int n, const float4* pos, const float4* vel, float4* pos_out, int* order)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const Grid g = *grid;
    float4 p = pos[i];
    int k = cell_start[ball_cell(p, vel, i, g, fallen_y)] + rank[i];
    pos_out[k] = p;
    order[k] = i;
}

// Registers for 1536 threads an SM (40 a thread): more warps hide the loads' latency better than
// the few bytes spilled cost (32 registers spilled heavily and lost).
#define SWEEP_MIN_BLOCKS (1536 / BLOCK)

// One thread per (cell-sorted) ball: test every ball of the 27 neighbour cells, nine runs of
// three; each ball writes only its own list, so the lists come out symmetric without atomics. Where
// the grid is split, the slow balls' pairs with fast ones, and the fast balls' own, follow in sweep_fast.
// Right after grid_scatter (order non-null) velocities, spins and ids are still in the previous
// order, sorted ball j's at row order[j]: each thread also copies its own into the new order
// (vel_out, spin_yz_out, ids_out). A search again over the same pass (lists that overflowed) passes
// a null order: rows are then the sorted indices.
extern "C" __global__ void __launch_bounds__(BLOCK, SWEEP_MIN_BLOCKS) sweep(const float4* __restrict__ pos,
                                 const float4* __restrict__ vel, const float2* __restrict__ spin_yz,
                                 const int* __restrict__ ids, const int* __restrict__ order,
                                 float4* __restrict__ vel_out, float2* __restrict__ spin_yz_out,
                                 int* __restrict__ ids_out, const Grid* __restrict__ grid,
                                 const int* __restrict__ cell_start,
                                 int n, float t, float margin, float fallen_y, int k, int stride,
                                 int* count, int* partners, unsigned long long* summary)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned found = 0, scanned = 0;
    float4 p9 = i < n ? pos[i] : make_float4(0.f, 0.f, 0.f, 0.f);
    bool live = i < n && p9.y >= fallen_y;
    if (i < n && order) {
        int row = order[i];
        vel_out[i] = vel[row];
        spin_yz_out[i] = spin_yz[row];
        ids_out[i] = ids[row];
    }
    // a fast ball (sorted after the fine cells where the grid is split) is searched by sweep_fast
    if (live && !(grid->coarse > 0.f && i >= cell_start[grid->nx * grid->ny * grid->nz])) {
        const Grid g = *grid;
        float far = t * g.speed_bound;  // how far no slow pair can close in the lifetime
        double bound = ((double)MARGIN(margin) * ((double)p9.w + g.max_radius) + far) * (1.0 + 1e-5);
        // the distance bound (above), squared; it needs margin >= 0 (reach grows with the radii)
        float beyond2 = MARGIN(margin) >= 0.f ? (float)(bound * bound * (1.0 + 1e-5)) : INF;
        int3 c = cell_of(p9, g);
        // the runs: `width` + 1 cells from `first`, a row of cells (nx) apart, `rows` rows a plane
        int x0 = max(c.x - 1, 0), width = min(c.x + 1, g.nx - 1) - x0;
        int y0 = max(c.y - 1, 0), rows = min(c.y + 1, g.ny - 1) - y0 + 1;
        int z0 = max(c.z - 1, 0), runs = rows * (min(c.z + 1, g.nz - 1) - z0 + 1);
        int first = cell_index(x0, y0, z0, g);
        // The walk as bits, one a run (few registers: the run and row counters spilled): bit r set where
        // the run after run r starts a plane (every rows-th), the highest set bit marking the last run.
        unsigned last = 1u << (runs - 1), planes = rows == 3 ? 0x24u : rows == 2 ? 0xAAu : 0xFFu;
        unsigned walk = last | (planes & (last - 1));
        int row_step = g.nx, plane_step = g.nx * (g.ny - rows + 1);
        int j0 = cell_start[first], end = cell_start[first + width + 1];
        for (;;) {
            // the next run's bounds, loaded while this run is tested
            bool more = walk > 1;
            first += walk & 1 ? plane_step : row_step;
            walk >>= 1;
            int next_j0 = 0, next_end = 0;
            if (more) { next_j0 = cell_start[first]; next_end = cell_start[first + width + 1]; }
            // the tests, counted a run at a time (a count in the loop held a register there): the run's balls,
            // the ball itself (in its own run) taken off after the last
            scanned += end - j0;
            // BATCH positions of the run in one round of loads, then their tests in order
            for (; j0 < end; j0 += BATCH) {
                float4 pj[BATCH];
#pragma unroll
                for (int b = 0; b < BATCH; ++b)
                    if (j0 + b < end) pj[b] = pos[j0 + b];
                // the batch's distances before its tests: their chains overlap (a distance past the run's
                // end, from a position not loaded, is never tested)
                float d2[BATCH];
#pragma unroll
                for (int b = 0; b < BATCH; ++b) d2[b] = distance_squared(pj[b], p9);
#pragma unroll
                for (int b = 0; b < BATCH; ++b) {
                    int j = j0 + b;
                    if (j >= end || j == i) continue;
                    if (d2[b] > beyond2) continue;
                    float dist = sqrtf(d2[b]), within = reach(pj[b], p9, margin);
                    if (dist - far > within) continue;
                    // within reach already: a pair at any speed (fl(dist - T*speed) <= dist, as
                    // rounding is monotone; a NaN velocity comes with a NaN position), so no velocity.
                    // The ball's own velocity is loaded again here, where few candidates get: kept in
                    // registers through the loop, it spilled the runs' bounds.
                    float4 v9 = order ? vel_out[i] : vel[i];
                    if (dist <= within || approaches(dist, vel[order ? order[j] : j], v9, t, within)) {
                        if (found < k) partners[(size_t)found * stride + i] = j;
                        ++found;
                    }
                }
            }
            if (!more) break;
            j0 = next_j0;
            end = next_end;
        }
        --scanned;  // the ball itself
        if (found > k) atomicMax(&summary[LONGEST], (unsigned long long)found);
    }
    if (i < n) count[i] = found;
    add_totals(summary, scanned, found);
}

#include "balls/grid_setup.cuh"
#include "balls/grid_fast.cuh"
