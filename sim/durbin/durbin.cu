// The Levinson-Durbin recursion on the GPU: every kernel of sim/durbin, one source (with persistent.cuh and
// batched.cuh, included by the builds that take them).
//
// Options:  -DTWO_KERNEL   two launches per step (the course's scheme): dot partials, then update
//           -DPERSISTENT   one launch for a range of steps; with -DCLUSTER_EXCHANGE the blocks form one
//                          thread-block cluster and exchange through distributed shared memory and
//                          cluster barriers, else a cooperative grid exchanges through flags in global
//                          memory (one barrier per step)
//           -DBATCHED -DGROUP=1|32|0   many independent systems: a thread, a warp or a block each;
//                          GROUP=1 with -DREG_ORDER=32: a thread per system holding r and y in registers
//           -DFP32         float instead of double       -DV32   PolyBench 3.2's scalar recursion
//           -DPLANT_DOT_START=X   tests only: a wrong dot-product start (see dot_start)
// Build with --fmad=false: updates round like the C code (only the sums' order differs).
//
// State after step k-1 (k entries): y[0..k-1], alpha_{k-1}, beta_{k-1}. Step k:
//   beta_k = (1 - alpha^2) beta;  s = sum_{i<k} r[k-1-i] y[i];  alpha_k = -(r[k] + s) / beta_k
//   y[i], y[k-1-i] <- y[i] + alpha_k y[k-1-i], y[k-1-i] + alpha_k y[i]  (pair i, from the same two loads)
//   y[k] = alpha_k
// (3.2: beta_k = beta - alpha*alpha*beta, s starts at r[k], alpha_k = -s * beta_k.)

#ifdef FP32
typedef float real;
typedef unsigned int word;
#define SENTINEL 0x7fa0beefu  // a signalling-NaN payload no arithmetic produces
#define QUIET_NAN 0x7fffffffu
__device__ __forceinline__ word bits_of(real v) { return __float_as_uint(v); }
__device__ __forceinline__ real real_of(word w) { return __uint_as_float(w); }
#else
typedef double real;
typedef unsigned long long word;
#define SENTINEL 0x7ff4dead0000beefull
#define QUIET_NAN 0x7fffffffffffffffull
__device__ __forceinline__ word bits_of(real v) { return (word)__double_as_longlong(v); }
__device__ __forceinline__ real real_of(word w) { return __longlong_as_double((long long)w); }
#endif

// --- the scalar recursion, shared by every kernel -------------------------------------------------
__device__ __forceinline__ real first_alpha(real r0) {
#ifdef V32
  return r0;
#else
  return -r0;
#endif
}
// where C starts the dot product: 3.2 sums into sum[0][k] = r[k], 4.x from 0.0.
// PLANT_DOT_START=X (tests only, through sim.gpu.cuda.planted; never in a build the product makes): every
// dot product starts X off, a wrong kernel that verification must catch.
__device__ __forceinline__ real dot_start(real rk) {
#if defined(PLANT_DOT_START) && defined(V32)
  return rk + real(PLANT_DOT_START);
#elif defined(PLANT_DOT_START)
  return real(PLANT_DOT_START);
#elif defined(V32)
  return rk;
#else
  return real(0);
#endif
}
__device__ __forceinline__ real next_beta(real alpha, real beta) {
#ifdef V32
  return beta - alpha * alpha * beta;
#else
  return (real(1) - alpha * alpha) * beta;
#endif
}
// s: the dot product including dot_start(rk)
__device__ __forceinline__ real next_alpha(real rk, real s, real beta) {
#ifdef V32
  return -s * beta;
#else
  return -(rk + s) / beta;
#endif
}

// --- reductions in a fixed order (every block that sums the same values gets the same bits) -------
__device__ __forceinline__ real warp_sum(real v) {  // lane 0 holds the total
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}
// The block's total in thread 0 (blockDim.x a multiple of 32). Uses red[32]; the caller puts a
// barrier between thread 0's use of the result and the next call.
__device__ __forceinline__ real block_sum(real v, real* red) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  v = warp_sum(v);
  if (lane == 0) red[warp] = v;
  __syncthreads();
  if (warp == 0) v = warp_sum(lane < (int)(blockDim.x >> 5) ? red[lane] : real(0));
  return v;
}

#ifdef TWO_KERNEL
// ================================================================================================
// Two launches per step. The step number lives on the device (steps[0] for the dot launch, steps[1]
// for the update launch, each written only by the other launch), so a CUDA graph of many steps
// replays without the host. Launch 1: partials[b] = block b's share of sum_{i<k} r[k-1-i] y[i].
extern "C" __global__ void __launch_bounds__(1024)
two_kernel_dot(const real* __restrict__ r, const real* __restrict__ y, real* __restrict__ partials, int* steps) {
  __shared__ real red[32];
  const int k = steps[0];
  real v = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < k; i += gridDim.x * blockDim.x) v += r[k - 1 - i] * y[i];
  v = block_sum(v, red);
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = v;
    if (blockIdx.x == 0) steps[1] = k;
  }
}

// Launch 2: every block sums the partials (same order: same alpha), block 0 records alpha_k, beta_k
// and y[k]; the pairs (i, k-1-i) are updated from the same two loads, grid-stride.
extern "C" __global__ void __launch_bounds__(1024)
two_kernel_update(const real* __restrict__ r, real* __restrict__ y, real* __restrict__ alphas,
                  real* __restrict__ betas, const real* __restrict__ partials, int nparts, int* steps) {
  __shared__ real s_alpha;
  const int k = steps[1];
  if (threadIdx.x < 32) {
    real v = 0;
    for (int b = threadIdx.x; b < nparts; b += 32) v += partials[b];
    v = warp_sum(v);
    if (threadIdx.x == 0) {
      const real rk = r[k];
      const real beta = next_beta(alphas[k - 1], betas[k - 1]);
      const real alpha = next_alpha(rk, dot_start(rk) + v, beta);
      s_alpha = alpha;
      if (blockIdx.x == 0) {
        alphas[k] = alpha;
        betas[k] = beta;
        y[k] = alpha;
        steps[0] = k + 1;
      }
    }
  }
  __syncthreads();
  const real alpha = s_alpha;
  const int pairs = (k + 1) / 2;  // i < pairs; when k is odd the middle entry pairs with itself
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < pairs; i += gridDim.x * blockDim.x) {
    const int j = k - 1 - i;
    const real yi = y[i], yj = y[j];
    y[i] = yi + alpha * yj;
    if (j != i) y[j] = yj + alpha * yi;
  }
}
#endif  // TWO_KERNEL

#ifdef PERSISTENT
#include "durbin/persistent.cuh"
#endif  // PERSISTENT

#ifdef BATCHED
#include "durbin/batched.cuh"
#endif  // BATCHED
