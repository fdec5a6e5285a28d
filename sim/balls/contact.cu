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
//   more loads in flight; ptxas spills a few bytes, cheaper than the waits). A cap of 6 blocks
//   (40 registers) spilled heavily and lost: 0.653 ms;
// - the first batch's partner indices loaded together with the ball's count and state: one round
//   of dependent loads fewer.
// Both take the same operations in the same order: the state is the same bit for bit.

#include "balls/contact.cuh"
#ifdef BOUNDS
#include "balls/bounds.cuh"
#endif

#define BATCH 4
#define STEP_BLOCK 256  // pipeline_gpu.STEP_BLOCK
#define MIN_BLOCKS 4

// BOUNDS (the step before a proximity pass): the new state's bounds for the pass's grid (bounds.cuh),
// one box per block into block_bounds, then fold_bounds; fallen_y and block_bounds are read by that
// build only.
extern "C" __global__ void __launch_bounds__(STEP_BLOCK, MIN_BLOCKS)
    step(const float4* __restrict__ pos, const float4* __restrict__ vel, const float2* __restrict__ spin_yz,
         float4* __restrict__ pos_out, float4* __restrict__ vel_out, float2* __restrict__ spin_yz_out,
         const int* __restrict__ count, const int* __restrict__ partners, int stride, int n, float density, float w0,
         float zeta, float mu, float mu_roll, float gravity, float dt, float trough_radius, float trough_z_min,
         float trough_z_max, float fallen_y, int* block_bounds)
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
    // one box per block, folded by fold_bounds: atomics from every block of a 10M-ball launch on
    // the same 8 words serialised (+17% on that step, measured on an H200)
    int m = bounds_of_block(box);
    if (threadIdx.x < 8) block_bounds[blockIdx.x * 8 + threadIdx.x] = m;
#endif
}

#ifdef BOUNDS
// One block: the step's per-block boxes (ordered ints) -> bounds[] as grid_bounds leaves them.
extern "C" __global__ void fold_bounds(const int* block_bounds, int blocks, int* bounds)
{
    float box[8];
    bounds_empty(box);
    for (int b = threadIdx.x; b < blocks; b += blockDim.x)
#pragma unroll
        for (int a = 0; a < 8; ++a) {
            float v = unordered(block_bounds[b * 8 + a]);
            box[a] = a < 3 ? fminf(box[a], v) : fmaxf(box[a], v);
        }
    int m = bounds_of_block(box);
    if (threadIdx.x < 8) bounds[threadIdx.x] = m;
}
#endif
