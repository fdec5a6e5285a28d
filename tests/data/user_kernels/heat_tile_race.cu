// PLANTED MISTAKE: a shared-memory tile without the barrier between filling it and reading it. Each
// thread stores its cell in the block's tile (and the edge threads the halo around it), then reads its
// four neighbours from the tile at once: the rows above and below are stored by other warps, which
// have often not got there yet, so a cell may read what the tile held before. Add __syncthreads()
// where marked to fix it. Launch: block 32 x 8 (one warp a row), tile of 34 x 10.

#define BX 32
#define BY 8

extern "C" __global__ void step(int ni, int nj, long long stride, float tfac, const float* __restrict__ tin,
                                float* __restrict__ tout) {
    __shared__ float tile[BY + 2][BX + 2];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int i = blockIdx.x * BX + tx, j = blockIdx.y * BY + ty;
    const bool inside = i < ni && j < nj;
    const long long at = (long long)j * stride + i;
    if (inside) {
        tile[ty + 1][tx + 1] = tin[at];
        if (tx == 0 && i > 0) tile[ty + 1][0] = tin[at - 1];
        if ((tx == BX - 1 || i == ni - 1) && i < ni - 1) tile[ty + 1][tx + 2] = tin[at + 1];
        if (ty == 0 && j > 0) tile[0][tx + 1] = tin[at - stride];
        if ((ty == BY - 1 || j == nj - 1) && j < nj - 1) tile[ty + 2][tx + 1] = tin[at + stride];
    }
    // (missing) __syncthreads();
    if (!inside) return;
    const float t = tile[ty + 1][tx + 1];
    if (i == 0 || j == 0 || i == ni - 1 || j == nj - 1) {
        tout[at] = t;
        return;
    }
    const float d2tdx2 = tile[ty + 1][tx] - 2 * t + tile[ty + 1][tx + 2];
    const float d2tdy2 = tile[ty][tx + 1] - 2 * t + tile[ty + 2][tx + 1];
    tout[at] = t + tfac * (d2tdx2 + d2tdy2);
}
