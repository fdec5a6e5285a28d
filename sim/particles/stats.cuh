// The starters' distance statistics of the particles' step (binning.cu built with -DSTATS, included there):
// each block's closest pair, sum of distances and pair count added to the step's totals, and folded into
// the run's absmin and absavg after each step.
#pragma once

// stats[]: per step, the closest pair (as the bits of a non-negative double, which order like
// integers), the sum of pair distances and their count (in cutoffs, r2 != 0 only).
__device__ __forceinline__ void add_stats(unsigned long long* stats, double dmin, double dsum, unsigned long long count)
{
    // summed over the block first: one set of atomics per block, not per warp (they would serialise)
    __shared__ double warp_min[32], warp_sum[32];
    __shared__ unsigned long long warp_count[32];
    for (int offset = 16; offset > 0; offset >>= 1) {
        dmin = fmin(dmin, __shfl_down_sync(0xffffffffu, dmin, offset));
        dsum += __shfl_down_sync(0xffffffffu, dsum, offset);
        count += __shfl_down_sync(0xffffffffu, count, offset);
    }
    int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    if (lane == 0) { warp_min[warp] = dmin; warp_sum[warp] = dsum; warp_count[warp] = count; }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < (int)(blockDim.x >> 5); ++w) {
            dmin = fmin(dmin, warp_min[w]);
            dsum += warp_sum[w];
            count += warp_count[w];
        }
        if (count) {
            atomicMin(&stats[0], (unsigned long long)__double_as_longlong(dmin));
            atomicAdd((double*)&stats[1], dsum);
            atomicAdd(&stats[2], count);
        }
    }
}

// After each step: the starters' running absmin / absavg, on the device (no host round trip).
extern "C" __global__ void fold_stats(unsigned long long* stats, double* totals)
{
    double dmin = __longlong_as_double((long long)stats[0]);
    double dsum = __longlong_as_double((long long)stats[1]);
    unsigned long long count = stats[2];
    if (count) { totals[1] += dsum / count; totals[2] += 1.0; }
    totals[0] = fmin(totals[0], dmin);
    stats[0] = (unsigned long long)__double_as_longlong(1.0);
    stats[1] = 0;
    stats[2] = 0;
}
