// The course report's prefix sum of the bin counts (the blockscan variant, sim/particles/gpu.py and
// ranks_gpu.py), part of binning.cu (included where its kernels were): three launches, each block scanning
// twice its threads' counts in shared memory.
#pragma once

// The report's scan, launch 1: each block scans 2 * blockDim counts in shared memory (inclusive,
// written to start + 1) and leaves its total in sums[block].
// The counts are zeroed as they are read, ready for the next binning.
extern "C" __global__ void scan_blocks(int* count, int m, int* start, int* sums, const int* length)
{
    if (length && !*length) return;  // (one GPU: not binning this step)
    extern __shared__ int part[];
    int base = 2 * blockIdx.x * blockDim.x, t = threadIdx.x, width = 2 * blockDim.x;
    part[2 * t] = base + 2 * t < m ? count[base + 2 * t] : 0;
    part[2 * t + 1] = base + 2 * t + 1 < m ? count[base + 2 * t + 1] : 0;
    if (base + 2 * t < m) count[base + 2 * t] = 0;
    if (base + 2 * t + 1 < m) count[base + 2 * t + 1] = 0;
    for (int stride = 1; stride < width; stride *= 2) {  // Hillis-Steele over the block's slice
        __syncthreads();
        int a = 2 * t, b = 2 * t + 1;
        int va = a >= stride ? part[a - stride] : 0, vb = b >= stride ? part[b - stride] : 0;
        __syncthreads();
        part[a] += va;
        part[b] += vb;
    }
    __syncthreads();
    if (base + 2 * t < m) start[base + 2 * t + 1] = part[2 * t];
    if (base + 2 * t + 1 < m) start[base + 2 * t + 2] = part[2 * t + 1];
    if (t == blockDim.x - 1) sums[blockIdx.x] = part[width - 1];
}

// Launch 2: common/scan.cuh's scan_totals (one block: the block totals -> exclusive offsets).

// Launch 3: add each block's offset to its slice.
extern "C" __global__ void add_sums(int* start, int m, const int* sums, const int* length)
{
    if (length && !*length) return;
    int base = 2 * blockIdx.x * blockDim.x, t = threadIdx.x;
    int add = sums[blockIdx.x];
    if (base + 2 * t < m) start[base + 2 * t + 1] += add;
    if (base + 2 * t + 1 < m) start[base + 2 * t + 2] += add;
}
