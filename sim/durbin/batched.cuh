// Levinson-Durbin, many independent systems in one launch (durbin.cu's -DBATCHED build, which includes this
// after the scalar recursion and the reductions).
#pragma once
// ================================================================================================
// Many independent systems (rows of r, order each), one launch. GROUP=1: a thread per system, the
// block's systems transposed in shared memory (element i of system s at i*(B+1)+s: conflict-free),
// the dot product in C order: bit-identical to the CPU twin. GROUP=32: a warp per system; GROUP=0:
// the whole block per system; both keep their system in shared memory and reduce in a fixed tree.
// GROUP=1 with REG_ORDER: the loops unrolled to REG_ORDER (orders up to it) so that every index is a
// compile-time constant and r, y live in registers. Each thread reads its own row of r straight into
// registers (16-byte words when the row allows; L1 serves the warp's 32 rows), which measured 13%
// faster than staging r through shared memory; y and alphas leave through the transposed tile, since
// a thread writing its own row scatters the warp's stores (twice as slow).
// Outputs: y and alphas (systems, order), betas[s] = the last beta (normalised prediction error).
#ifdef REG_ORDER
#define BATCHED_BOUNDS 256  // about 150 registers a thread
#else
#define BATCHED_BOUNDS 1024
#endif
#if GROUP == 1 && defined(REG_ORDER)
// A row of `order` entries (at most N) into registers v[0..N), zero past the row and for a dead thread.
template <int N>
__device__ __forceinline__ void row_to_registers(real (&v)[N], const real* __restrict__ row, int order, bool live) {
  constexpr int per = 16 / sizeof(real);  // entries in a 16-byte word
  if (live && order == N && N % per == 0 && (reinterpret_cast<unsigned long long>(row) & 15) == 0) {
    const uint4* words = reinterpret_cast<const uint4*>(row);
#pragma unroll
    for (int w = 0; w < N / per; ++w) {
      const uint4 word4 = __ldg(words + w);
      const real* e = reinterpret_cast<const real*>(&word4);
#pragma unroll
      for (int j = 0; j < per; ++j) v[w * per + j] = e[j];
    }
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i) v[i] = (live && i < order) ? row[i] : real(0);
  }
}
#endif
#if GROUP == 1
// GROUP=1 staging: the block's `count` systems from row `first` on, between their rows in global
// memory and the transposed tile (entry i of system s at i * L + s); consecutive threads move
// consecutive words of the rows, so the global side is coalesced.
__device__ __forceinline__ void rows_to_tile(real* tile, const real* __restrict__ rows, long long first, int count,
                                             int order, int L) {
  const int B = blockDim.x;  // an int stride keeps e signed: the compiler unrolls the copy by 4
  for (int e = threadIdx.x; e < count * order; e += B) {
    const int s = e / order, i = e - s * order;
    tile[i * L + s] = rows[first * order + e];
  }
}
__device__ __forceinline__ void tile_to_rows(real* __restrict__ rows, const real* tile, long long first, int count,
                                             int order, int L) {
  const int B = blockDim.x;
  for (int e = threadIdx.x; e < count * order; e += B) {
    const int s = e / order, i = e - s * order;
    rows[first * order + e] = tile[i * L + s];
  }
}
#endif
extern "C" __global__ void __launch_bounds__(BATCHED_BOUNDS)
batched(const real* __restrict__ r, real* __restrict__ y, real* __restrict__ alphas, real* __restrict__ betas,
        int systems, int order) {
  extern __shared__ unsigned char dynamic_smem[];
  real* sm = reinterpret_cast<real*>(dynamic_smem);
  const int t = threadIdx.x, B = blockDim.x;
#if GROUP == 1 && defined(REG_ORDER)
  const int L = B + 1;                     // stride between elements of one system in the staging area
  const long long first = (long long)blockIdx.x * B;
  const int count = (int)min((long long)B, systems - first);
  real rv[REG_ORDER], yv[REG_ORDER];
  row_to_registers(rv, r + (first + t) * order, order, t < count);
  real alpha = first_alpha(rv[0]), beta = real(1);
  yv[0] = alpha;
  sm[t] = alpha;
#pragma unroll
  for (int k = 1; k < REG_ORDER; ++k) {
    if (k < order) {
      beta = next_beta(alpha, beta);
      real s = dot_start(rv[k]);
#pragma unroll
      for (int i = 0; i < k; ++i) s = s + rv[k - 1 - i] * yv[i];
      alpha = next_alpha(rv[k], s, beta);
#pragma unroll
      for (int i = 0; i < k / 2; ++i) {
        const real yi = yv[i], yj = yv[k - 1 - i];
        yv[i] = yi + alpha * yj;
        yv[k - 1 - i] = yj + alpha * yi;
      }
      if (k & 1) yv[k / 2] = yv[k / 2] + alpha * yv[k / 2];
      yv[k] = alpha;
      sm[k * L + t] = alpha;
    }
  }
  if (t < count) betas[first + t] = beta;
  __syncthreads();
  tile_to_rows(alphas, sm, first, count, order, L);
  __syncthreads();
#pragma unroll
  for (int i = 0; i < REG_ORDER; ++i)
    if (i < order) sm[i * L + t] = yv[i];
  __syncthreads();
  tile_to_rows(y, sm, first, count, order, L);
#elif GROUP == 1
  const int L = B + 1;                     // stride between elements of one system
  real* rS = sm;
  real* yS = sm + (size_t)order * L;
  real* aS = yS + (size_t)order * L;
  const long long first = (long long)blockIdx.x * B;
  const int count = (int)min((long long)B, systems - first);
  rows_to_tile(rS, r, first, count, order, L);
  __syncthreads();
  if (t < count) {
    const real* rv = rS + t;
    real* yy = yS + t;
    real* al = aS + t;
    real alpha = first_alpha(rv[0]), beta = real(1);
    yy[0] = alpha;
    al[0] = alpha;
    for (int k = 1; k < order; ++k) {
      beta = next_beta(alpha, beta);
      const real rk = rv[k * L];
      real s = dot_start(rk);
      for (int i = 0; i < k; ++i) s = s + rv[(k - 1 - i) * L] * yy[i * L];
      alpha = next_alpha(rk, s, beta);
      for (int i = 0; i < k / 2; ++i) {
        const int j = k - 1 - i;
        const real yi = yy[i * L], yj = yy[j * L];
        yy[i * L] = yi + alpha * yj;
        yy[j * L] = yj + alpha * yi;
      }
      if (k & 1) yy[(k / 2) * L] = yy[(k / 2) * L] + alpha * yy[(k / 2) * L];
      yy[k * L] = alpha;
      al[k * L] = alpha;
    }
    betas[first + t] = beta;
  }
  __syncthreads();
  tile_to_rows(y, yS, first, count, order, L);
  tile_to_rows(alphas, aS, first, count, order, L);
#else
#if GROUP == 32
  const int lane = t & 31, G = 32;
  const long long sys = (long long)blockIdx.x * (B / 32) + (t >> 5);
  real* rv = sm + (size_t)(t >> 5) * 3 * order;
#define GSYNC() __syncwarp()
#else
  __shared__ real red[32];
  __shared__ real s_total;
  const int lane = t, G = B;
  const long long sys = blockIdx.x;
  real* rv = sm;
#define GSYNC() __syncthreads()
#endif
  real* yy = rv + order;
  real* al = yy + order;
  const bool live = sys < systems;
  if (live)
    for (int i = lane; i < order; i += G) rv[i] = r[sys * order + i];
  GSYNC();
  real alpha = first_alpha(rv[0]), beta = real(1);
  if (lane == 0) { yy[0] = alpha; al[0] = alpha; }
  GSYNC();
  for (int k = 1; k < order; ++k) {
    real v = 0;
    for (int i = lane; i < k; i += G) v += rv[k - 1 - i] * yy[i];
#if GROUP == 32
    v = __shfl_sync(0xffffffffu, warp_sum(v), 0);
#else
    v = block_sum(v, red);
    if (t == 0) s_total = v;
    __syncthreads();
    v = s_total;
#endif
    const real rk = rv[k];
    beta = next_beta(alpha, beta);
    alpha = next_alpha(rk, dot_start(rk) + v, beta);
    GSYNC();  // every dot read before any pair is written
    for (int i = lane; i < (k + 1) / 2; i += G) {
      const int j = k - 1 - i;
      const real yi = yy[i], yj = yy[j];
      yy[i] = yi + alpha * yj;
      if (j != i) yy[j] = yj + alpha * yi;
    }
    if (lane == 0) { yy[k] = alpha; al[k] = alpha; }
    GSYNC();
  }
  if (live) {
    for (int i = lane; i < order; i += G) {
      y[sys * order + i] = yy[i];
      alphas[sys * order + i] = al[i];
    }
    if (lane == 0) betas[sys] = beta;
  }
#undef GSYNC
#endif
}
