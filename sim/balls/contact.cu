// One physics step on the GPU: the twin of contact_cpu.py (same contact model, contact.cuh).
//
// One thread per ball gathers the forces of its partner list (symmetric: each pair is in both
// balls' lists, so no atomics) and of the trough, then integrates (semi-implicit Euler). The state
// is double-buffered: every thread reads the old state and writes the new one.
//
// The partner loop is bound by load latency, not bytes: one partner at a time is two dependent
// loads (its index, then its position) per partner. BATCH partners go together: their indices in
// one round of independent loads, their positions in a second, then their forces in list order
// (the sums are the same as one at a time, bit for bit). A partner's velocity and spin are read
// only when the two balls touch: most proximity pairs are near misses.

#include "balls/contact.cuh"

#ifndef BATCH
#define BATCH 4
#endif

extern "C" __global__ void step(const float4* __restrict__ pos, const float4* __restrict__ vel,
                                const float4* __restrict__ omega, float4* __restrict__ pos_out,
                                float4* __restrict__ vel_out, float4* __restrict__ omega_out,
                                const int* __restrict__ count, const int* __restrict__ partners, int stride,
                                int n, float density, float w0, float zeta, float mu, float mu_roll,
                                float gravity, float dt, float trough_radius, float trough_z_min,
                                float trough_z_max)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const Contact c = {density, w0, zeta, mu, mu_roll, gravity, dt, trough_radius, trough_z_min, trough_z_max};
    float4 p = pos[i], v = vel[i], w = omega[i];
    float3 force = make_float3(0.f, 0.f, 0.f), torque = make_float3(0.f, 0.f, 0.f);
    int partners_of_i = count[i];
    for (int first = 0; first < partners_of_i; first += BATCH) {
        int j[BATCH];
        float4 pj[BATCH];
#pragma unroll
        for (int b = 0; b < BATCH; ++b)
            j[b] = first + b < partners_of_i ? partners[(size_t)(first + b) * stride + i] : -1;
#pragma unroll
        for (int b = 0; b < BATCH; ++b)
            if (j[b] >= 0) pj[b] = pos[j[b]];
#pragma unroll
        for (int b = 0; b < BATCH; ++b)
            if (j[b] >= 0) ball_contact(p, v, w, pj[b], j[b], vel, omega, c, force, torque);
    }
    finish_step(p, v, w, force, torque, c);
    pos_out[i] = p;
    vel_out[i] = v;
    omega_out[i] = w;
}
