// One physics step on the GPU: the twin of contact_cpu.py (same contact model, contact.cuh).
//
// One thread per ball gathers the forces of its partner list (symmetric: each pair is in both
// balls' lists, so no atomics) and of the trough, then integrates (semi-implicit Euler). The state
// is double-buffered: every thread reads the old state and writes the new one, 40 bytes a ball
// (contact.cuh): the step is bound by these bytes.
//
// The partner loop waits on loads: a partner is two dependent loads (its index, then its position).
// BATCH partners go together: their indices in one round of independent loads, their positions in a
// second, then their forces in list order (the same sums as one at a time, bit for bit). Measured
// at 10M on an H200: 4 beats 1 and 8. A partner's velocity and spin are read only when the two
// balls touch (contact.cuh).
//
// Two more things shorten that wait (measured at 10M on an H200, forces+integrate 0.425 -> 0.372 ms):
// - registers capped so that MIN_BLOCKS blocks of STEP_BLOCK threads fit on an SM (50% occupancy:
//   more loads in flight; ptxas spills a few bytes, cheaper than the waits). A cap at 40 registers
//   spilled heavily and lost: 0.653 ms. The same 1024 threads an SM in blocks of 128 beat 256 and
//   512: whole step 0.481, 0.469 (128), 0.495 ms;
// - the first batch's partner indices loaded together with the ball's count and state: one round
//   of dependent loads fewer.
// Both take the same operations in the same order: the state is the same bit for bit.

#include "balls/contact.cuh"
#ifdef BOUNDS
#include "balls/bounds.cuh"
#endif

#define BATCH 4
// STEP_BLOCK: the launch's block size, given by the build (kernels.STEP_BLOCK); 1024 threads an SM
#define MIN_BLOCKS (1024 / STEP_BLOCK)

// BOUNDS (the step before a proximity pass): the new state's bounds for the pass's grid (bounds.cuh),
// one box per warp into warp_boxes, then fold_bounds; fallen_y and warp_boxes are read by that build
// only.
extern "C" __global__ void __launch_bounds__(STEP_BLOCK, MIN_BLOCKS)
    step(const float4* __restrict__ pos, const float4* __restrict__ vel, const float2* __restrict__ spin_yz,
         float4* __restrict__ pos_out, float4* __restrict__ vel_out, float2* __restrict__ spin_yz_out,
         const int* __restrict__ count, const int* __restrict__ partners, int stride, int n, float density, float w0,
         float zeta, float mu, float mu_roll, float gravity, float dt, float trough_radius, float trough_z_min,
         float trough_z_max, float fallen_y, int* warp_boxes)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
#ifdef BOUNDS
    float box[8];
    bounds_empty(box);
#else
    if (i >= n) return;
#endif
    if (i < n) {
        const Contact c = {density, w0, zeta, mu, mu_roll, gravity, dt, trough_radius, trough_z_min, trough_z_max};
        float4 p = pos[i], v = vel[i], w = spin_of(v, spin_yz[i]);
        float3 force = make_float3(0.f, 0.f, 0.f), torque = make_float3(0.f, 0.f, 0.f);
        int j[BATCH];
        // the first batch's slots before the count arrives: every list has room for BATCH (capacity >= 16),
        // so the loads are in bounds; slots past the count are never used. Volatile, or the compiler
        // sinks them below the count's test and the round of dependent loads is back.
#pragma unroll
        for (int b = 0; b < BATCH; ++b)
            asm volatile("ld.global.nc.u32 %0, [%1];" : "=r"(j[b]) : "l"(partners + (size_t)b * stride + i));
        int partners_of_i = count[i];
        for (int first = 0; first < partners_of_i; first += BATCH) {
            float4 pj[BATCH];
#pragma unroll
            for (int b = 0; b < BATCH; ++b)
                j[b] = first + b >= partners_of_i ? -1 : first == 0 ? j[b] : partners[(size_t)(first + b) * stride + i];
#pragma unroll
            for (int b = 0; b < BATCH; ++b)
                if (j[b] >= 0) pj[b] = pos[j[b]];
#pragma unroll
            for (int b = 0; b < BATCH; ++b)
                if (j[b] >= 0) ball_contact(p, v, w, pj[b], j[b], vel, spin_yz, c, force, torque);
        }
        finish_step(p, v, w, force, torque, c);
        pos_out[i] = p;
        vel_out[i] = make_float4(v.x, v.y, v.z, w.x);
        spin_yz_out[i] = make_float2(w.y, w.z);
#ifdef BOUNDS
        bounds_add(box, p, v, fallen_y);
#endif
    }
#ifdef BOUNDS
    // one box per warp, folded by fold_bounds: no barrier here (a block-wide reduction kept the
    // block's warps waiting for its slowest: +17% on this step), no atomics on 8 shared words
    bounds_of_warp(box);
    if ((threadIdx.x & 31) == 0) {
        int w = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
        ((int4*)warp_boxes)[2 * w] = make_int4(ordered(box[0]), ordered(box[1]), ordered(box[2]), ordered(box[3]));
        ((int4*)warp_boxes)[2 * w + 1] = make_int4(ordered(box[4]), ordered(box[5]), ordered(box[6]), ordered(box[7]));
    }
#endif
}

#ifdef BOUNDS
// Boxes stored as 8 ordered ints each (one per warp of the step before a pass) into bounds[]:
// a grid-stride loop over a few blocks per SM, then bounds_commit.
extern "C" __global__ void fold_bounds(const int* boxes, int count, int* bounds)
{
    float box[8];
    bounds_empty(box);
    for (int w = blockIdx.x * blockDim.x + threadIdx.x; w < count; w += gridDim.x * blockDim.x) {
        int4 lo = ((const int4*)boxes)[2 * w], hi = ((const int4*)boxes)[2 * w + 1];
        int v[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
#pragma unroll
        for (int a = 0; a < 8; ++a) box[a] = a < 3 ? fminf(box[a], unordered(v[a])) : fmaxf(box[a], unordered(v[a]));
    }
    bounds_commit(box, bounds);
}
#endif
