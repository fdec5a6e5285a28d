// An MPI rank's own kernels (sim/particles/ranks_gpu.py), part of binning.cu's RANKS build (included at its
// end: REAL2, bin_of, the step's macros are binning.cu's).
#pragma once

// A boundary row for a neighbour: the positions of slots [first, first + count) in bin order, and the
// row's nb + 1 bin starts from start[bin0] on, relative to its first slot.
extern "C" __global__ void pack_ghosts(const REAL2* __restrict__ pos, const int* __restrict__ perm, int first,
                                       int count, const int* __restrict__ start, int bin0, int nb,
                                       REAL2* __restrict__ out, int* __restrict__ seg)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < count) out[t] = pos[perm[first + t]];
    if (t <= nb) seg[t] = start[bin0 + t] - first;
}

// A neighbour's boundary row received at indices [index0, index0 + count): slots [slot0, slot0 + count)
// point at it, and its bins' starts (start[bin0 + b] for b in [b_lo, b_hi]) at those slots.
extern "C" __global__ void take_ghosts(int* __restrict__ perm, int slot0, int count, int index0,
                                       int* __restrict__ start, int bin0, int b_lo, int b_hi,
                                       const int* __restrict__ seg)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < count) perm[slot0 + t] = index0 + t;
    if (t >= b_lo && t <= b_hi) start[bin0 + t] = seg[t] + slot0;
}

// Particles leaving for a neighbour: the state of slots [first, first + count), contiguous.
extern "C" __global__ void pack_leavers(const REAL2* __restrict__ pos, const REAL2* __restrict__ vel,
                                        const int* __restrict__ id, const int* __restrict__ perm, int first,
                                        int count, REAL2* __restrict__ pos2, REAL2* __restrict__ vel2,
                                        int* __restrict__ id2)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= count) return;
    int k = perm[first + t];
    pos2[t] = pos[k];
    vel2[t] = vel[k];
    id2[t] = id[k];
}

// One of my boundary rows (count: its nb bins): a neighbour's particles arriving there (imm) added to
// my own counts, so the scan keeps them slots; with `own`, my own counts are kept first.
extern "C" __global__ void count_arrivals(int* __restrict__ count, const int* __restrict__ imm,
                                          int* __restrict__ own, int nb)
{
    int b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= nb) return;
    int c = count[b];
    if (own) own[b] = c;
    count[b] = c + imm[b];
}

// Arrived particles (pos: k of them, at indices index0 on) into the slots kept for them in the row of
// bins from bin0: after my own (own[]: from below) or at the end of the bin (own null: from above),
// whichever side they came from. left[]: the row's arrivals still to place, counted down.
extern "C" __global__ void place_arrivals(const REAL2* __restrict__ pos, int k, int index0, REAL inv_width, int nb,
                                          const int* __restrict__ start, int bin0, const int* __restrict__ own,
                                          int* __restrict__ left, int* __restrict__ perm)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= k) return;
    REAL2 p = pos[i];
    int b = bin_of(p.x, p.y, inv_width, nb), x = b - bin0;
    int r = atomicSub(&left[x], 1);  // r .. 1: one slot each
    perm[own ? start[b] + own[x] + r - 1 : start[b + 1] - r] = index0 + i;
}

// The step's host numbers in one copy: out[t] = start[at[t]] for t < m, then the stray flag and the step's
// largest move (a float's bits), both cleared. spec, for the launches queued before the host reads those: the
// next step's interior slots (from at[inner] and at[inner + 1]) and whether the window's slots (start[at[0]])
// fit the rank's cap rows.
extern "C" __global__ void probe(const int* __restrict__ start, const long long* __restrict__ at, int m,
                                 int* __restrict__ stray, int* __restrict__ out, long long cap, int inner,
                                 int* __restrict__ spec)
{
    int t = threadIdx.x;
    if (t < m) out[t] = start[at[t]];
    if (t == m) {
        out[m] = stray[0];
        out[m + 1] = stray[1];
        stray[0] = stray[1] = 0;
    }
    if (t == m + 1) {
        spec[0] = start[at[inner]];
        spec[1] = start[at[inner + 1]];
        spec[2] = start[at[0]] <= cap;
    }
}

// After a step that does not renumber: my slots [lo, hi) are the rows that step wrote, so each slot reads
// its own row from then on (ghost slots keep theirs).
extern "C" __global__ void slots_as_rows(int* __restrict__ perm, int lo, int hi)
{
    int i = lo + blockIdx.x * blockDim.x + threadIdx.x;
    if (i < hi) perm[i] = i;
}
