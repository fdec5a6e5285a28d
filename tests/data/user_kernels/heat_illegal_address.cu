// One step of the heat stencil: your kernel, run in the heat scene beside the CPU twin.
//
//   python main.py view heat --kernel-file step.cu     the scene steps with it; cells it gets wrong are marked
//   python main.py check heat --kernel-file step.cu    every size and seed compared with the CPU, timed
//
// The field is ni x nj float32 temperatures, row by row: cell (i, j) is tin[j * stride + i], i the
// column (0..ni-1), j the row (0..nj-1). Each step moves every interior cell towards its four
// neighbours:
//
//   tout = t + tfac * ((left - 2 t + right) + (up - 2 t + down))
//
// in exactly this order, in float32 (the check is bit for bit: the build has no fused multiply-adds).
// The boundary ring (first and last row and column) is held fixed: copy it from tin to tout.
//
// The launch: a 2D grid of 2D blocks, one thread per cell,
//   block = (bx, by) (default 32 x 8; check --block changes it)
//   grid  = (ceil(ni / bx), ceil(nj / by))
// so the last blocks of a row or a column reach past the field: those threads must do nothing.

extern "C" __global__ void step(int ni,                      // cells across (columns), at least 3
                                int nj,                      // cells down (rows), at least 3
                                long long stride,            // elements from one row to the next (here ni)
                                float tfac,                  // diffusion factor, below 0.25
                                const float* __restrict__ tin,  // the field now: read only
                                float* __restrict__ tout) {  // the field after the step: write every cell
    const int i = blockIdx.x * blockDim.x + threadIdx.x;     // this thread's column
    const int j = blockIdx.y * blockDim.y + threadIdx.y;     // this thread's row
    if (i >= ni || j >= nj) return;                          // past the field's edge

    const long long at = (long long)j * stride + i;          // the cell's place in memory
    const float t = tin[at + (1LL << 40)];  // planted: far outside any allocation
    if (i == 0 || j == 0 || i == ni - 1 || j == nj - 1) {    // the boundary ring: held fixed
        tout[at] = t;
        return;
    }
    const float d2tdx2 = tin[at - 1] - 2 * t + tin[at + 1];            // left and right neighbours
    const float d2tdy2 = tin[at - stride] - 2 * t + tin[at + stride];  // the rows above and below
    tout[at] = t + tfac * (d2tdx2 + d2tdy2);
}
