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

// Where slot j's neighbour is read: its row (through perm when THROUGH), or the block's tile where that holds
// the slot (TILED).
template <bool THROUGH>
struct Neighbour {
    SRC2 pos;
    const int* __restrict__ perm;
    const REAL2* tile;  // (TILED) slots [slab_first, slab_first + slab)
    int slab_first, slab;
    __device__ __forceinline__ REAL2 operator()(int j) const
    {
#ifdef TILED
        if ((unsigned)(j - slab_first) < (unsigned)slab) return tile[j - slab_first];
#endif
        return load2(pos, row_of(THROUGH, perm, j));
    }
};

// A particle's sums over the 9 bins around (bx, by) of the numbering `start`: three runs of slots, each
// particle read `at` its slot.
// Rows outside [row_lo, row_hi] are not searched (a rank's window; all rows on one GPU).
// The particle's own slot `self` is skipped: its pair adds coef * 0 to the sums, which changes no bit (a
// sum that starts at +0 is never -0), yet it is most of the pairs a warp finds (1.1 a particle at 10M, the
// 2020 preset, 0.1 of them another particle), and each such pair took the warp through the force.
template <class At>
__device__ __forceinline__ void sum_neighbours(Pairs& acc, const int* __restrict__ start, const At& at, int bx, int by,
                                               int nb, int row_lo, int row_hi, int self, REAL xi, REAL yi)
{
    int x0 = max(bx - 1, 0), x1 = min(bx + 1, nb - 1);
    for (int cy = max(by - 1, row_lo); cy <= min(by + 1, row_hi); ++cy) {
        int end = start[cy * nb + x1 + 1];
        for (int j = start[cy * nb + x0]; j < end; ++j) {
            REAL2 q = at(j);
            REAL dx = q.x - xi, dy = q.y - yi;
            REAL r2 = dx * dx + dy * dy;
            if (r2 > CUTOFF * CUTOFF || j == self) continue;
            acc.add(dx, dy, r2);
        }
    }
}
