// The live balls' bounding box, largest radius and fastest speed, reduced over a launch: the grid's
// size comes from it (grid.cuh). grid_bounds reads the state for it; the step before a pass takes it
// from the state it writes (contact.cu, BOUNDS: one box per warp, then fold_bounds), which saves
// that pass a read of the whole state.
#pragma once

#ifndef INF
#define INF __int_as_float(0x7f800000)
#endif

// Floats as ints that order like the floats, for atomicMin/atomicMax.
__device__ __forceinline__ int ordered(float f) { int i = __float_as_int(f); return i >= 0 ? i : i ^ 0x7fffffff; }
__device__ __forceinline__ float unordered(int i) { return __int_as_float(i >= 0 ? i : i ^ 0x7fffffff); }

// box[]: min x, y, z, max x, y, z, max radius, max speed squared. A ball below fallen_y is left out.
__device__ __forceinline__ void bounds_empty(float box[8])
{
#pragma unroll
    for (int a = 0; a < 8; ++a) box[a] = a < 3 ? INF : -INF;
}
__device__ __forceinline__ void bounds_add(float box[8], float4 p, float4 u, float fallen_y)
{
    if (p.y < fallen_y) return;
    box[0] = fminf(box[0], p.x); box[1] = fminf(box[1], p.y); box[2] = fminf(box[2], p.z);
    box[3] = fmaxf(box[3], p.x); box[4] = fmaxf(box[4], p.y); box[5] = fmaxf(box[5], p.z);
    box[6] = fmaxf(box[6], p.w); box[7] = fmaxf(box[7], u.x * u.x + u.y * u.y + u.z * u.z);
}

// The warp's boxes reduced into lane 0's. Every lane of the warp must call it.
__device__ __forceinline__ void bounds_of_warp(float box[8])
{
#pragma unroll
    for (int a = 0; a < 8; ++a)
        for (int offset = 16; offset > 0; offset >>= 1) {
            float other = __shfl_down_sync(0xffffffffu, box[a], offset);
            box[a] = a < 3 ? fminf(box[a], other) : fmaxf(box[a], other);
        }
}

// The block's boxes reduced: per warp, then per block; threads 0..7 return holding box entry
// threadIdx.x (as an ordered int), the others return a value of no use. Every thread must call it.
__device__ __forceinline__ int bounds_of_block(float box[8])
{
    __shared__ float per_warp[32][8];
    int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, warps = blockDim.x >> 5;
    bounds_of_warp(box);
    if (lane == 0)
#pragma unroll
        for (int a = 0; a < 8; ++a) per_warp[warp][a] = box[a];
    __syncthreads();
    if (threadIdx.x >= 8) return 0;
    int a = threadIdx.x;
    float m = per_warp[0][a];
    for (int w = 1; w < warps; ++w) m = a < 3 ? fminf(m, per_warp[w][a]) : fmaxf(m, per_warp[w][a]);
    return ordered(m);
}

// A few blocks' boxes into bounds[] by atomics (grid_bounds' grid-stride launch).
__device__ __forceinline__ void bounds_commit(float box[8], int* bounds)
{
    int m = bounds_of_block(box);
    if (threadIdx.x < 3) atomicMin(&bounds[threadIdx.x], m);
    else if (threadIdx.x < 8) atomicMax(&bounds[threadIdx.x], m);
}
