// The DLI heat-conduction step on the GPU: every variant from this one source.
//
// Build options (sim/heat/kernels.py lists every build):
//   (none)                 step_global, step_shared and paint (block shape read from blockDim)
//   -DTEMPORAL_THREADS=N   step_temporal_1 .. step_temporal_<K_MAX> instead, __launch_bounds__(N)
//   --fmad=false           every build the product makes by default: no contraction, so every
//                          variant is bit-identical to the CPU twin; --fmad=true is the --fma option
//   -DPLANT_FACTOR=F       tests only (sim.gpu.cuda.planted, never in a build the product makes): every
//                          variant multiplies tfac by F, a wrong kernel that verification must catch
//
// Layout: row j of the field starts at j * stride (elements). global and shared run on dense rows
// (stride = ni); pitched and temporal on rows padded to the device's pitch alignment (stride is a
// multiple of 128 elements). Every kernel writes every cell of the output, the boundary ring with
// its unchanged value, so an output buffer needs no preparation.

// One cell's update in the course's order, float32 left to right. l - 2c is one fused multiply-add:
// 2c is exact (a doubling), so rounding l - 2c once is what the course's two operations give, bit for
// bit (overflow, infinities and NaN alike), in one instruction instead of two.
__device__ __forceinline__ float heat_update(float c, float l, float r, float u, float d, float tfac) {
#ifdef PLANT_FACTOR
    tfac *= PLANT_FACTOR;
#endif
    const float d2tdx2 = __fmaf_rn(-2.0f, c, l) + r;
    const float d2tdy2 = __fmaf_rn(-2.0f, c, u) + d;
    return c + tfac * (d2tdx2 + d2tdy2);
}

__device__ __forceinline__ bool interior(int i, int j, int ni, int nj) {
    return i > 0 && i < ni - 1 && j > 0 && j < nj - 1;
}

#ifndef TEMPORAL_THREADS

// One thread per cell (the course's first version; on pitched rows, its third). Rows beyond the
// grid's 65535 block rows are taken in a grid-stride loop.
extern "C" __global__ void step_global(int ni, int nj, long long stride, float tfac,
                                       const float* __restrict__ tin, float* __restrict__ tout) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= ni) return;
    for (int j = blockIdx.y * blockDim.y + threadIdx.y; j < nj; j += gridDim.y * blockDim.y) {
        const long long at = (long long)j * stride + i;
        float t = tin[at];
        if (interior(i, j, ni, nj)) t = heat_update(t, tin[at - 1], tin[at + 1], tin[at - stride], tin[at + stride], tfac);
        tout[at] = t;
    }
}

// The block's tile and a one-cell halo staged in shared memory (the course's second version):
// (blockDim.x + 2) x (blockDim.y + 2) floats of dynamic shared memory.
extern "C" __global__ void step_shared(int ni, int nj, long long stride, float tfac,
                                       const float* __restrict__ tin, float* __restrict__ tout) {
    extern __shared__ float tile[];
    const int w = blockDim.x + 2, cells = w * (blockDim.y + 2), threads = blockDim.x * blockDim.y;
    const int rank = threadIdx.y * blockDim.x + threadIdx.x;
    const int x0 = blockIdx.x * blockDim.x - 1;
    const int i = x0 + 1 + threadIdx.x;
    for (int jb = blockIdx.y * blockDim.y; jb < nj; jb += gridDim.y * blockDim.y) {  // the same for the whole block
        const int y0 = jb - 1;
        for (int t = rank; t < cells; t += threads) {
            const int x = x0 + t % w, y = y0 + t / w;
            tile[t] = (x >= 0 && x < ni && y >= 0 && y < nj) ? tin[(long long)y * stride + x] : 0.0f;
        }
        __syncthreads();
        const int j = jb + threadIdx.y;
        if (i < ni && j < nj) {
            const float* s = tile + (threadIdx.y + 1) * w + threadIdx.x + 1;
            float t = s[0];
            if (interior(i, j, ni, nj)) t = heat_update(t, s[-1], s[1], s[-w], s[w], tfac);
            tout[(long long)j * stride + i] = t;
        }
        __syncthreads();
    }
}

// Cells (i, j) with (i - cx)^2 + (j - cy)^2 <= r2 inside the box [i0, i0 + w) x [j0, j0 + h) take
// `value` in both buffers. Rounded float64 operations (never contracted): the same cells as the
// host's numpy expression in any build.
extern "C" __global__ void paint(long long stride, int i0, int j0, int w, int h, double cx, double cy, double r2,
                                 float value, float* a, float* b) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    const double dx = __dsub_rn((double)(i0 + x), cx), dy = __dsub_rn((double)(j0 + y), cy);
    if (__dadd_rn(__dmul_rn(dx, dx), __dmul_rn(dy, dy)) <= r2) {
        const long long at = (long long)(j0 + y) * stride + i0 + x;
        a[at] = value;
        b[at] = value;
    }
}

#else  // TEMPORAL_THREADS: k steps per launch

#ifndef K_MAX
#define K_MAX 8
#endif
// Blocks of 256 threads or more: at least 16 warps per SM, so at most 128 registers a thread (1024-thread
// blocks: 64, and spills). Smaller blocks: the registers the pipeline wants (about 150 at k = 8, no spills)
// and as many blocks as fit (12 warps an SM at 128 threads): measured faster on an H200 than 128 registers
// and spills (docs/performance.md, heat).
#define TEMPORAL_MIN_BLOCKS (TEMPORAL_THREADS >= 256 ? 512 / TEMPORAL_THREADS : 1)
#define COLS 4             // cells per lane: one float4
#define STRIP (32 * COLS)  // columns a warp reads

// Each warp streams down a strip of STRIP columns and a band of `rows` rows, keeping K time levels
// in registers (2.5D blocking): a row read from memory climbs one level per row it moves, and level
// K is written. Left and right neighbours come from the next lanes (shuffles); the strip overlaps
// its neighbours by HALO columns on the left and STRIP - HALO - WIDTH on the right, at least K
// each, and the band reads K rows above and below. No shared memory, no __syncthreads: warps of a
// block are independent; the block shape only groups strips (blockDim.x / 32) and bands
// (blockDim.y).
template <int K>
struct Trapezoid {
    static constexpr int HALO = (K + COLS - 1) / COLS * COLS;           // left overlap: K, whole float4s
    static constexpr int WIDTH = (STRIP - HALO - K) / COLS * COLS;      // columns a warp writes
    static_assert(WIDTH > 0, "K too large for a strip");
};

struct Band {
    int ni, nj;
    long long stride;
    float tfac;
    int x;       // this lane's first column
    int yb, ye;  // rows written: [yb, ye)
    int q_end;   // iterations that matter: (ye - yb) + 2K
    unsigned inner;  // bit c: column x + c is interior
    bool loadable, writer;
    const float* __restrict__ tin;
    float* __restrict__ tout;
};

template <int K>
struct Pipeline {
    float ring[K][3][COLS];  // level L's rows of the last three iterations, slot = iteration % 3
    float4 ahead[3];         // input rows, loaded three iterations before they are used
};

// A lane's next input and output rows, each pointer moved one row an iteration and dereferenced only for
// a row inside the grid. An empty asm after each move hides the pointer's history from the compiler, which
// otherwise rebuilds every address as base + row * stride (64-bit multiplies in the loop: 6% more of its
// instructions, 7% slower on an H200).
struct Cursor {
    const float* in;  // row yb - K + q + 3: the row loaded at iteration q
    float* out;       // row yb + q - 2K: the row written at iteration q
};

__device__ __forceinline__ void next_row(const float*& p, long long stride) {
    p += stride;
    asm("" : "+l"(p));
}

__device__ __forceinline__ void next_row(float*& p, long long stride) {
    p += stride;
    asm("" : "+l"(p));
}

template <bool EDGE>
__device__ __forceinline__ float4 load_row(const Band& b, const float* at, int row, bool wanted) {
    if (!EDGE) return __ldg(reinterpret_cast<const float4*>(at));  // stream<false>: rows to ye + K + 4 exist
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (wanted && b.loadable && row >= 0 && row < b.nj) v = __ldg(reinterpret_cast<const float4*>(at));
    return v;
}

// Iteration q (slot P = q % 3): input row yb - K + q enters level 0; level L computes row
// yb - K + q - L from level L-1's rows of iterations q-2, q-1, q; level K's row yb + q - 2K is
// written. Iterations before 2L give level L rows nothing valid depends on.
template <int K, bool EDGE, int P>
__device__ __forceinline__ void iteration(Pipeline<K>& p, Cursor& at, const Band& b, int q) {
    constexpr int UP = (P + 1) % 3, CENTRE = (P + 2) % 3;
    const float4 in = p.ahead[P];
    p.ahead[P] = load_row<EDGE>(b, at.in, b.yb - K + q + 3, q + 3 < b.q_end);
    next_row(at.in, b.stride);
    p.ring[0][P][0] = in.x;
    p.ring[0][P][1] = in.y;
    p.ring[0][P][2] = in.z;
    p.ring[0][P][3] = in.w;
    float out[COLS];
#pragma unroll
    for (int L = 1; L <= K; ++L) {
        const float* up = p.ring[L - 1][UP];
        const float* c = p.ring[L - 1][CENTRE];
        const float* down = p.ring[L - 1][P];
        const float left = __shfl_up_sync(0xffffffffu, c[COLS - 1], 1);
        const float right = __shfl_down_sync(0xffffffffu, c[0], 1);
        const int row = b.yb - K + q - L;
        const bool row_inner = !EDGE || (row > 0 && row < b.nj - 1);
#pragma unroll
        for (int k = 0; k < COLS; ++k) {
            const float l = k == 0 ? left : c[k - 1];
            const float r = k == COLS - 1 ? right : c[k + 1];
            const float t = heat_update(c[k], l, r, up[k], down[k], b.tfac);
            out[k] = !EDGE || (row_inner && ((b.inner >> k) & 1u)) ? t : c[k];
        }
        if (L < K) {
#pragma unroll
            for (int k = 0; k < COLS; ++k) p.ring[L][P][k] = out[k];
        }
    }
    const int row = b.yb + q - 2 * K;
    if (b.writer && q >= 2 * K && row < b.ye) {
        float* dst = at.out;
        if (!EDGE || b.x + COLS <= b.ni) {
            __stcg(reinterpret_cast<float4*>(dst), make_float4(out[0], out[1], out[2], out[3]));  // L2 only: not re-read
        } else {
#pragma unroll
            for (int k = 0; k < COLS; ++k)
                if (b.x + k < b.ni) dst[k] = out[k];
        }
    }
    next_row(at.out, b.stride);
}

// EDGE: the strip or band reaches the grid's boundary or beyond, so loads are guarded and the
// boundary ring keeps its values; otherwise every cell the warp computes is interior, and every row
// it loads exists (the loop runs to a multiple of 3 iterations and loads 3 ahead: rows to ye + K + 4).
template <int K, bool EDGE>
__device__ __forceinline__ void stream(const Band& b) {
    Pipeline<K> p;
#pragma unroll
    for (int L = 0; L < K; ++L)
#pragma unroll
        for (int s = 0; s < 3; ++s)
#pragma unroll
            for (int k = 0; k < COLS; ++k) p.ring[L][s][k] = 0.0f;
    Cursor at;
    at.in = b.tin + (long long)(b.yb - K) * b.stride + b.x;
    at.out = b.tout + (long long)(b.yb - 2 * K) * b.stride + b.x;
#pragma unroll
    for (int s = 0; s < 3; ++s) {
        p.ahead[s] = load_row<EDGE>(b, at.in, b.yb - K + s, true);
        next_row(at.in, b.stride);
    }
    for (int q = 0; q < b.q_end; q += 3) {
        iteration<K, EDGE, 0>(p, at, b, q);
        iteration<K, EDGE, 1>(p, at, b, q + 1);
        iteration<K, EDGE, 2>(p, at, b, q + 2);
    }
}

template <int K>
__device__ __forceinline__ void temporal(int ni, int nj, long long stride, float tfac, int rows,
                                         const float* __restrict__ tin, float* __restrict__ tout) {
    using T = Trapezoid<K>;
    const int lane = threadIdx.x & 31;
    const int strip = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    const int band = blockIdx.y * blockDim.y + threadIdx.y;
    const long long first_row = (long long)band * rows;
    if ((long long)strip * T::WIDTH >= ni || first_row >= nj) return;  // the whole warp
    Band b;
    b.ni = ni;
    b.nj = nj;
    b.stride = stride;
    b.tfac = tfac;
    const int x0 = strip * T::WIDTH - T::HALO;
    b.x = x0 + COLS * lane;
    b.yb = (int)first_row;
    b.ye = min(b.yb + rows, nj);
    b.q_end = b.ye - b.yb + 2 * K;
    b.inner = 0;
#pragma unroll
    for (int k = 0; k < COLS; ++k) b.inner |= (unsigned)(b.x + k > 0 && b.x + k < ni - 1) << k;
    b.loadable = b.x >= 0 && b.x < stride;
    b.writer = lane >= T::HALO / COLS && lane < (T::HALO + T::WIDTH) / COLS;
    b.tin = tin;
    b.tout = tout;
    if (x0 >= 0 && x0 + STRIP <= ni && b.yb - K >= 0 && b.ye + K + 5 <= nj)
        stream<K, false>(b);
    else
        stream<K, true>(b);
}

#define TEMPORAL_KERNEL(K)                                                                             \
    extern "C" __global__ void __launch_bounds__(TEMPORAL_THREADS, TEMPORAL_MIN_BLOCKS) step_temporal_##K(\
        int ni, int nj, long long stride, float tfac, int rows, const float* __restrict__ tin,       \
        float* __restrict__ tout) {                                                                    \
        temporal<K>(ni, nj, stride, tfac, rows, tin, tout);                                            \
    }

TEMPORAL_KERNEL(1)
TEMPORAL_KERNEL(2)
TEMPORAL_KERNEL(3)
TEMPORAL_KERNEL(4)
TEMPORAL_KERNEL(5)
TEMPORAL_KERNEL(6)
TEMPORAL_KERNEL(7)
TEMPORAL_KERNEL(8)
#if K_MAX > 8
#error "add TEMPORAL_KERNEL lines up to K_MAX"
#endif

#endif  // TEMPORAL_THREADS
