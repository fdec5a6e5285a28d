// Prefix sums of int counts (bin or cell counts) in three launches, bound by memory traffic:
//   scan_reduce   each tile's total
//   scan_totals   one block: the tiles' totals -> each tile's offset (exclusive, in place)
//   scan_tiles    each tile again from its offset: start[k] = count[0] + ... + count[k - 1], k = 0 .. m
// scan_reduce and scan_tiles take the tiles in turns over a grid of at most a few blocks an SM (CountScan),
// so a launch with nothing to scan (one GPU's particles on a step that does not bin) costs few blocks.
// The counts are read twice and the sums written once, with 16-byte loads and stores striped across
// the block (coalesced); with `clear` the counts are zeroed as they are read, ready for the next
// counting. On an H200, 20M counts: these three launches 95 us, CuPy's cumsum (CUB) 152 us.
// `length` (may be null): a device int, the counts to scan when fewer than m are in use and only the
// device knows how many (the balls' grid; 0 on a particles step that does not bin): tiles past it are
// left alone.
#pragma once

#define SCAN_THREADS 256
#define SCAN_ROUNDS 4  // int4 loads per thread and tile
#define SCAN_TILE (SCAN_THREADS * SCAN_ROUNDS * 4)

// Four counts from i (fewer at the end of the array, the rest 0).
__device__ __forceinline__ int4 scan_load4(const int* count, long long i, int m)
{
    if (i + 3 < m) return *(const int4*)(count + i);
    int4 v = make_int4(0, 0, 0, 0);
    if (i < m) v.x = count[i];
    if (i + 1 < m) v.y = count[i + 1];
    if (i + 2 < m) v.z = count[i + 2];
    return v;
}

__device__ __forceinline__ int scan_length(int m, const int* length) { return length ? min(*length, m) : m; }

// Exclusive scan of one value per thread over the block; *total gets the block's sum.
__device__ __forceinline__ int scan_block_exclusive(int v, int* total)
{
    __shared__ int warp_sums[32], block_total;
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    int inclusive = v;
    for (int offset = 1; offset < 32; offset <<= 1) {
        int u = __shfl_up_sync(0xffffffffu, inclusive, offset);
        if (lane >= offset) inclusive += u;
    }
    __syncthreads();  // the shared words are free again (a previous call's readers are done)
    if (lane == 31) warp_sums[warp] = inclusive;
    __syncthreads();
    if (warp == 0) {
        int w = lane < warps ? warp_sums[lane] : 0, upto = w;
        for (int offset = 1; offset < 32; offset <<= 1) {
            int u = __shfl_up_sync(0xffffffffu, upto, offset);
            if (lane >= offset) upto += u;
        }
        if (lane < warps) warp_sums[lane] = upto - w;
        if (lane == warps - 1) block_total = upto;
    }
    __syncthreads();
    *total = block_total;
    return warp_sums[warp] + inclusive - v;
}

extern "C" __global__ void __launch_bounds__(SCAN_THREADS) scan_reduce(const int* count, int m, const int* length,
                                                                      int* tile_sums)
{
    m = scan_length(m, length);
    for (int tile = blockIdx.x; (long long)tile * SCAN_TILE < m; tile += gridDim.x) {  // (the same for the block)
        long long base = (long long)tile * SCAN_TILE;
        int sum = 0;
#pragma unroll
        for (int r = 0; r < SCAN_ROUNDS; ++r) {
            int4 v = scan_load4(count, base + 4 * (r * SCAN_THREADS + threadIdx.x), m);
            sum += v.x + v.y + v.z + v.w;
        }
        int total;
        scan_block_exclusive(sum, &total);
        if (threadIdx.x == 0) tile_sums[tile] = total;
    }
}

// One block of 1024 threads: tile_sums -> exclusive offsets, a chunk of the block's width at a time. With
// `length` only the tiles of `tile` counts that hold the first *length (nothing when it is 0).
extern "C" __global__ void __launch_bounds__(1024) scan_totals(int* tile_sums, int tiles, const int* length, int tile)
{
    if (length) tiles = (int)min((long long)tiles, ((long long)max(*length, 0) + tile - 1) / tile);
    int carry = 0;
    for (int chunk = 0; chunk < tiles; chunk += blockDim.x) {
        int i = chunk + threadIdx.x;
        int own = i < tiles ? tile_sums[i] : 0, total;
        int before = scan_block_exclusive(own, &total);
        if (i < tiles) tile_sums[i] = carry + before;
        carry += total;
    }
}

// Each thread's four chunks are loaded before the first barrier (in flight together), and its sums
// stored as one aligned int4: start[i .. i + 3] are the sums before count[i .. i + 3].
extern "C" __global__ void __launch_bounds__(SCAN_THREADS) scan_tiles(int* count, int m, const int* length,
                                                                     const int* tile_offsets, int* start, int clear)
{
    m = scan_length(m, length);
    if (m == 0 && blockIdx.x == 0 && threadIdx.x == 0) start[0] = 0;
    for (int tile = blockIdx.x; (long long)tile * SCAN_TILE < m; tile += gridDim.x) {  // (the same for the block)
        long long base = (long long)tile * SCAN_TILE;
        int4 v[SCAN_ROUNDS];
#pragma unroll
        for (int r = 0; r < SCAN_ROUNDS; ++r) v[r] = scan_load4(count, base + 4 * (r * SCAN_THREADS + threadIdx.x), m);
        int carry = tile_offsets[tile];
#pragma unroll
        for (int r = 0; r < SCAN_ROUNDS; ++r) {
            long long i = base + 4 * (r * SCAN_THREADS + threadIdx.x);
            int total, before = carry + scan_block_exclusive(v[r].x + v[r].y + v[r].z + v[r].w, &total);
            carry += total;
            int4 sums = make_int4(before, before + v[r].x, before + v[r].x + v[r].y, before + v[r].x + v[r].y + v[r].z);
            if (i + 4 <= m) {
                *(int4*)(start + i) = sums;
                if (clear) *(int4*)(count + i) = make_int4(0, 0, 0, 0);
            } else if (i < m) {  // the last, partial chunk: m - i of 1..3 counts
                start[i] = sums.x;
                if (i + 1 < m) start[i + 1] = sums.y;
                if (i + 2 < m) start[i + 2] = sums.z;
                if (clear) for (long long k = i; k < m; ++k) count[k] = 0;
            }
            if (i < m && m <= i + 4) start[m] = sums.w + v[r].w;  // the chunk holding count[m - 1]: the total
        }
    }
}
