// A particle's forces from the 9 bins around it (binning.cu's step, included there: REAL2, load2, row_of
// and coef_of are binning.cu's): the sums over its interacting pairs, where each neighbour is read, and the
// walk over the three runs of slots.
#pragma once

// A particle's sums over its interacting pairs (r2 <= cutoff^2), added in the order they are found.
struct Pairs {
    REAL ax = 0, ay = 0;
    double dmin = 1.0, dsum = 0.0;  // STATS only
    unsigned long long pairs = 0;
    __device__ __forceinline__ void add(REAL dx, REAL dy, REAL r2)
    {
#ifdef STATS
        if (r2 != 0) {
            double d = sqrt((double)r2) / 0.01;
            dmin = fmin(dmin, d);
            dsum += d;
            ++pairs;
        }
#endif
        REAL coef = coef_of(r2 > MIN_R * MIN_R ? r2 : MIN_R * MIN_R);
        ax += coef * dx;
        ay += coef * dy;
    }
};

// Where a bin row's slot j is read: its row of the state (through perm when THROUGH), or the block's copy
// (TILED) where that holds the slot: slots [first, first + count) at staged[0 ..).
template <bool THROUGH>
struct Neighbour {
    SRC2 pos;
    const int* __restrict__ perm;
    const REAL2* staged = nullptr;
    int first = 0, count = 0;
    __device__ __forceinline__ REAL2 operator()(int j) const
    {
#ifdef TILED
        if ((unsigned)(j - first) < (unsigned)count) return staged[j - first];
#endif
        return load2(pos, row_of(THROUGH, perm, j));
    }
};

#ifdef TILED
// TILED: the block's copy of the slots its particles read, in shared memory. The block's particles are a
// run of slots in bin order (by row, near it), so their 9 bins are three runs of the numbering, one in each
// bin row around the first particle's, from the column left of the first particle to the column right of
// the last. Where the whole stretch of the numbering from the first run to the last fits, it is copied
// whole (a small box: rows of a few bins); otherwise the three runs, packed. A slot outside the copy (a
// block across a row's end, a run longer than the room) is read from memory.
#define TILE_SLOTS (15 * BLOCK / 4 > 2048 ? 2048 : 15 * BLOCK / 4)  // 3 runs of about a block and a quarter
struct Tile {
    int row0, whole;   // the bin row of part 0; whole: part 0 is the whole stretch, for every row
    int first[3];      // part k holds slots [first[k], first[k] + at[k + 1] - at[k]) at slot[at[k] ..)
    int at[4];
    REAL2 slot[TILE_SLOTS];

    // (one thread) The parts for a block whose first particle is in bin p and last in bin q; rows
    // [row_lo, row_hi] are searched. It reads the bin starts of rows the block's particles search and no
    // other (a rank's interior block: the ghost rows' starts are being written while it runs).
    __device__ __forceinline__ void plan(int2 p, int2 q, const int* __restrict__ start, int nb, int row_lo, int row_hi)
    {
        int lo = max(p.y - 1, row_lo), hi = min(q.y + 1, row_hi);
        int s0 = start[lo * nb + max(p.x - 1, 0)], s1 = start[hi * nb + min(q.x + 1, nb - 1) + 1];
        whole = s1 - s0 <= TILE_SLOTS;
        row0 = p.y - 1;
        at[0] = 0;
        if (whole) {
            first[0] = s0;
            at[1] = at[2] = at[3] = max(s1 - s0, 0);
            return;
        }
        for (int k = 0; k < 3; ++k) {
            int row = row0 + k, count = 0;
            first[k] = 0;
            if (row >= row_lo && row <= row_hi) {
                first[k] = start[row * nb + max(p.x - 1, 0)];
                int last = q.y == p.y ? min(q.x + 1, nb - 1) : nb - 1;  // across a row's end: to the row's end
                count = min(start[row * nb + last + 1] - first[k], TILE_SLOTS - at[k]);
            }
            at[k + 1] = at[k] + max(count, 0);
        }
    }

    // (every thread) The copy, read from the state.
    template <class Src>
    __device__ __forceinline__ void fill(Src pos, const int* __restrict__ perm, bool through)
    {
        for (int t = threadIdx.x; t < at[3]; t += blockDim.x) {
            int k = (t >= at[1]) + (t >= at[2]);
            slot[t] = load2(pos, row_of(through, perm, first[k] + t - at[k]));
        }
    }
};
#else
struct Tile;
#endif

// The readers of each bin row's slots for a block: its copy's part for that row, or memory.
template <bool THROUGH>
struct Neighbours {
    SRC2 pos;
    const int* __restrict__ perm;
    const Tile* tile;  // (TILED)
    __device__ __forceinline__ Neighbour<THROUGH> in_row(int cy) const
    {
#ifdef TILED
        int k = tile->whole ? 0 : cy - tile->row0;
        if ((unsigned)k < 3u)
            return {pos, perm, tile->slot + tile->at[k], tile->first[k], tile->at[k + 1] - tile->at[k]};
#endif
        return {pos, perm};
    }
};

// Candidate q at slot j: its pair added when within the cutoff, unless it is the particle itself (slot self).
__device__ __forceinline__ void consider(Pairs& acc, REAL2 q, int j, int self, REAL xi, REAL yi)
{
    REAL dx = q.x - xi, dy = q.y - yi;
    REAL r2 = dx * dx + dy * dy;
    if (r2 > CUTOFF * CUTOFF || j == self) return;
    acc.add(dx, dy, r2);
}

// A particle's sums over the 9 bins around (bx, by) of the numbering `start`: three runs of slots, each
// particle read where `rows` says for its bin row, in slot order.
// Rows outside [row_lo, row_hi] are not searched (a rank's window; all rows on one GPU).
// The particle's own slot `self` is skipped: its pair adds coef * 0 to the sums, which changes no bit (a
// sum that starts at +0 is never -0), yet it is most of the pairs a warp finds (1.1 a particle at 10M, the
// 2020 preset, 0.1 of them another particle), and each such pair took the warp through the force.
// Candidates are read two at a time, both loads in flight together: the step waits on them (0.340 against
// 0.368 ms a step at 10M; three or four at a time spill at 32 registers and lose).
template <class Rows>
__device__ __forceinline__ void sum_neighbours(Pairs& acc, const int* __restrict__ start, const Rows& rows, int bx, int by,
                                               int nb, int row_lo, int row_hi, int self, REAL xi, REAL yi)
{
    int x0 = max(bx - 1, 0), x1 = min(bx + 1, nb - 1);
    for (int cy = max(by - 1, row_lo); cy <= min(by + 1, row_hi); ++cy) {
        int end = start[cy * nb + x1 + 1];
        auto at = rows.in_row(cy);
        int j = start[cy * nb + x0];
        for (; j + 1 < end; j += 2) {
            REAL2 q0 = at(j), q1 = at(j + 1);
            consider(acc, q0, j, self, xi, yi);
            consider(acc, q1, j + 1, self, xi, yi);
        }
        if (j < end) consider(acc, at(j), j, self, xi, yi);
    }
}
