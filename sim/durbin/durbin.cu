// The Levinson-Durbin recursion on the GPU: every kernel of sim/durbin, one source.
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
// ================================================================================================
// One launch runs steps k0..k1-1. Block c owns the pair indices p in [c*S, c*S+S) for the whole run:
// at step k pair p is (p, j = k-1-p), active while j >= p. The low entries y[p] stay in the block
// (low[q], q = p - c*S); the high entries y[j] slide: each step they move one pair up, so a block
// keeps them in a ring indexed by j mod S and hands one entry (its last pair's) to the next block,
// which receives it as its first pair's new high entry; block 0's new one is alpha_{k-1} = y[k-1].
// The r values the next dot product needs stay in shared memory too: rs[q] = r[p+1] (for the high
// entry) and a ring rr[(k-p) mod S] = r[k-p] (for the low entry).
// Each block adds its entries' share of the NEXT step's dot product right after updating them, so
// one exchange per step carries everything: the partials (summed in the same order by every block)
// and the handoff entries.
//
// Grid exchange: slots in global memory, SLOT_STEPS = 2 * region steps deep, one word per block and
// step, SENTINEL until written (the host fills them before a launch). A block writes step m's value
// with a relaxed store and polls with relaxed loads (no L1 invalidation per step). Slots are reused
// a region later: at m % region == 1 a block resets its slots of the other half (all read: every
// block has read step m-2), at m % region == 2 it publishes after a fence, and readers fence after
// reading step m: the resets are visible before anyone polls the next region.
// Cluster exchange: every block pushes its partial into every block's shared memory (and its handoff
// into the next block's), double-buffered by step parity, then cluster.sync().

#define TIMEOUT_NS 2000000000ull  // a grid barrier that waits this long reports an error (not co-resident?)
#define POLL_PER_LANE 8              // the grid path's slots per polling lane: at most 256 blocks
#define HISTORY 256                  // alphas and betas kept in shared memory between bursts

// alpha_k with 1/beta_k formed ahead (4.x): one rounding more than the C code's division
__device__ __forceinline__ real alpha_times(real rk, real s, real beta, real inv_beta) {
#ifdef V32
  return -s * beta;
#else
  return -(rk + s) * inv_beta;
#endif
}

__device__ __forceinline__ word load_relaxed(const word* p) {
  word w;
#ifdef FP32
  asm volatile("ld.relaxed.gpu.global.b32 %0, [%1];" : "=r"(w) : "l"(p) : "memory");
#else
  asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(w) : "l"(p) : "memory");
#endif
  return w;
}
__device__ __forceinline__ void store_relaxed(word* p, word w) {
#ifdef FP32
  asm volatile("st.relaxed.gpu.global.b32 [%0], %1;" :: "l"(p), "r"(w) : "memory");
#else
  asm volatile("st.relaxed.gpu.global.b64 [%0], %1;" :: "l"(p), "l"(w) : "memory");
#endif
}
__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ word sanitized(real v) {  // never publish the sentinel itself
  const word w = bits_of(v);
  return w == SENTINEL ? QUIET_NAN : w;
}
// Poll one slot until written; false after TIMEOUT_NS.
__device__ __forceinline__ bool poll(const word* p, word& w, unsigned long long& deadline) {
  for (int i = 1;; ++i) {
    w = load_relaxed(p);
    if (w != SENTINEL) return true;
    if ((i & 255) == 0) {
      const unsigned long long now = global_ns();
      if (deadline == 0) deadline = now + TIMEOUT_NS;
      else if (now > deadline) return false;
    }
  }
}

#ifdef CLUSTER_EXCHANGE
// Hopper cluster primitives in PTX (NVRTC ships no cooperative_groups header): the cluster barrier
// (release/acquire orders the distributed-shared-memory stores) and a store into block `rank`'s copy
// of a __shared__ variable.
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
__device__ __forceinline__ void store_remote(real* local, int rank, real v) {
  const unsigned int addr = (unsigned int)__cvta_generic_to_shared(local);
  unsigned int remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(addr), "r"(rank));
#ifdef FP32
  asm volatile("st.shared::cluster.f32 [%0], %1;" :: "r"(remote), "f"(v) : "memory");
#else
  asm volatile("st.shared::cluster.f64 [%0], %1;" :: "r"(remote), "d"(v) : "memory");
#endif
}
#endif

__device__ __forceinline__ int wrap(int v, int S) { return v < 0 ? v + S : (v >= S ? v - S : v); }
__device__ __forceinline__ int mod(int v, int S) { const int m = v % S; return m < 0 ? m + S : m; }

extern "C" __global__ void __launch_bounds__(1024)
persistent(const real* __restrict__ r, real* __restrict__ y, real* __restrict__ alphas, real* __restrict__ betas,
           int n, int k0, int k1, int S, word* __restrict__ slot_sum, word* __restrict__ slot_hand, int region,
           int* __restrict__ status) {
  extern __shared__ unsigned char dynamic_smem[];
  real* __restrict__ low = reinterpret_cast<real*>(dynamic_smem);
  real* __restrict__ hi = low + S;
  real* __restrict__ rs = hi + S;
  real* __restrict__ rr = rs + S;
  __shared__ real red[32];
  __shared__ real s_hand_out;
  __shared__ real hist_alpha[HISTORY], hist_beta[HISTORY];  // block 0's alphas and betas, written in bursts
#ifdef CLUSTER_EXCHANGE
  __shared__ real x_sum[2][16];
  __shared__ real x_hand[2];
  cluster_sync();  // every block runs before anyone writes into its shared memory (one cluster = the grid)
#else
  __shared__ real s_sum, s_hand;
  __shared__ int s_stop;
  const int slot_steps = 2 * region;
#endif
  const int c = blockIdx.x, G = gridDim.x, t = threadIdx.x, B = blockDim.x;
  const int a = c * S;                              // first pair of this block
  const int m = max(0, min(S, n / 2 - a));          // pairs this block owns
  if (t == 0) s_hand_out = real(0);
  for (int q = t; q < m; q += B) rs[q] = r[a + q + 1];

  // load the state of step k0 from y and publish its dot-product share and handoff
  real part = 0;
  int base = mod(k0 - 1 - a, max(S, 1));            // ring slot of pair a's high entry at step k0
  for (int q = t; q < m; q += B) {
    const int p = a + q, j = k0 - 1 - p;
    if (j < p) break;
    const int s = wrap(base - q, S);
    if (j > p) {
      const real lo = y[p], hv = y[j];
      low[q] = lo;
      hi[s] = hv;
      rr[wrap(s + 1, S)] = r[j + 1];
      part += r[j] * lo + r[p] * hv;
    } else {
      const real v = y[p];
      hi[s] = v;
      part += r[p] * v;
    }
  }
  const int b = a + S;  // the next block's first pair: it receives y[k0-1-b] from us
  const real hand = (b < n / 2 && k0 - 1 - b >= b) ? y[k0 - 1 - b] : real(0);
  real alpha = alphas[k0 - 1], beta = betas[k0 - 1];
  real rk_next = __ldg(&r[k0]);                                      // r values a step ahead: their
  real rka_next = (t == 0 && k0 - a >= 0) ? __ldg(&r[k0 - a]) : real(0);  // latency hides behind a step

  for (int k = k0;; ++k) {
    // --- exchange: publish the share of step k's dot product (and the handoff), collect everyone's;
    // beta_k and 1/beta_k are formed while the exchange is in flight
    part = block_sum(part, red);
#ifdef CLUSTER_EXCHANGE
    const int par = k & 1;
    if (t < 32) {
      const real total = __shfl_sync(0xffffffffu, part, 0);
      const real h = __shfl_sync(0xffffffffu, k == k0 ? hand : s_hand_out, 0);
      if (G == 1) {
        if (t == 0) x_sum[par][0] = total;
      } else {
        if (t < G) store_remote(&x_sum[par][c], t, total);
        if (t == 0 && c + 1 < G) store_remote(&x_hand[par], c + 1, h);
      }
    }
    beta = next_beta(alpha, beta);
    const real inv_beta = real(1) / beta;
    if (G == 1) __syncthreads();
    else cluster_sync();
    real s = 0;
    for (int d = 0; d < G; ++d) s += x_sum[par][d];
    const real hand_in = x_hand[par];
#else
    const int slot = k % slot_steps;
    if (t == 0) {
      if (k % region == 1) {  // everyone has read step k-2: clear our slots of the other half
        const int other = slot < region ? region : 0;
        for (int i = 0; i < region; ++i) {
          store_relaxed(slot_sum + (size_t)(other + i) * G + c, SENTINEL);
          store_relaxed(slot_hand + (size_t)(other + i) * G + c, SENTINEL);
        }
      }
      if (k % region == 2) __threadfence();  // release: those resets before this step's values
#ifdef PLANT_SILENT_BLOCK  // tests only: the last block stops publishing, the others must time out
      if (!(c == G - 1 && k >= k0 + 5))
#endif
      {
        store_relaxed(slot_hand + (size_t)slot * G + c, sanitized(k == k0 ? hand : s_hand_out));
        store_relaxed(slot_sum + (size_t)slot * G + c, sanitized(part));
      }
    }
    beta = next_beta(alpha, beta);
    const real inv_beta = real(1) / beta;
    if (t < 32) {  // warp 0 polls every block's slot (and the handoff) at once, one round trip a pass
      const word* row = slot_sum + (size_t)slot * G;
      word w[POLL_PER_LANE + 1];
      bool waiting = true, late = false;
      unsigned long long deadline = 0;
      for (int spin = 1; waiting; ++spin) {
        bool missing = false;
#pragma unroll
        for (int i = 0; i < POLL_PER_LANE; ++i) {
          w[i] = t + 32 * i < G ? load_relaxed(row + t + 32 * i) : bits_of(real(0));
          missing |= w[i] == SENTINEL;
        }
        w[POLL_PER_LANE] = (t == 0 && c > 0) ? load_relaxed(slot_hand + (size_t)slot * G + c - 1) : bits_of(real(0));
        missing |= w[POLL_PER_LANE] == SENTINEL;
        waiting = __any_sync(0xffffffffu, missing);
        if (waiting && (spin & 255) == 0) {
          const unsigned long long now = global_ns();
          if (deadline == 0) deadline = now + TIMEOUT_NS;
          if (__shfl_sync(0xffffffffu, now > deadline ? 1 : 0, 0)) {
            late = true;
            break;
          }
        }
      }
      real v = 0;
#pragma unroll
      for (int i = 0; i < POLL_PER_LANE; ++i)
        if (t + 32 * i < G) v += real_of(w[i]);
      v = warp_sum(v);
      if (k % region == 2) __threadfence();  // acquire: see the resets made before these values
      if (t == 0) {
        s_sum = v;
        s_hand = real_of(w[POLL_PER_LANE]);
        s_stop = late;
        if (late) atomicMax(status, k);
      }
    }
    __syncthreads();
    if (s_stop) break;
    const real s = s_sum;
    const real hand_in = s_hand;
#endif

    // --- step k: alpha (every thread computes the same bits), then the pairs
    const real rk = rk_next, rka = rka_next;
    if (k + 1 < k1) {
      rk_next = __ldg(&r[k + 1]);
      if (t == 0 && k + 1 - a >= 0) rka_next = __ldg(&r[k + 1 - a]);
    }
    const real alpha_prev = alpha;
    alpha = alpha_times(rk, dot_start(rk) + s, beta, inv_beta);
    if (c == 0 && t == 0) {  // the history goes out in bursts: no global store right before a barrier
      const int h = (k - k0) & (HISTORY - 1);
      hist_alpha[h] = alpha;
      hist_beta[h] = beta;
      if (h == HISTORY - 1 || k + 1 == k1)
        for (int i = 0; i <= h; ++i) {
          alphas[k - h + i] = hist_alpha[i];
          betas[k - h + i] = hist_beta[i];
        }
    }
    if (t == 0 && k - 1 - a >= a) {  // pair a active: its new high entry arrives (thread 0 updates pair a)
      hi[base] = c == 0 ? alpha_prev : hand_in;
      if (k - 1 - a > a) rr[wrap(base + 1, S)] = rka;
    }
    part = 0;
    const int last = min(m - 1, (k - 1) / 2 - a);  // the block's last active pair
    for (int q = t; q <= last; q += B) {
      const int p = a + q, j = k - 1 - p;
      const int sl = wrap(base - q, S);
      if (j > p) {
        const real lo = low[q], hv = hi[sl];
        const real nlo = lo + alpha * hv, nhi = hv + alpha * lo;
        low[q] = nlo;
        hi[sl] = nhi;
        part += rr[wrap(sl + 1, S)] * nlo + rs[q] * nhi;  // r[k-p] y[p] + r[p+1] y[j], for step k+1
        if (q == S - 1) s_hand_out = nhi;               // y[j] moves to the next block's first pair
      } else {                                          // the middle entry pairs with itself
        const real v = hi[sl];
        const real nv = v + alpha * v;
        low[q] = nv;
        part += rs[q] * nv;
      }
    }
    if (c == 0 && t == 0) part += r[0] * alpha;  // y[k] = alpha_k enters at pair 0 next step
    if (k + 1 == k1) break;
    base = wrap(base + 1, S);
  }

  // store the state after step k1-1 (pairs of step k1-1) back into y
#ifndef CLUSTER_EXCHANGE
  if (s_stop) return;
#endif
  const int kl = k1 - 1;
  for (int q = t; q < m; q += B) {
    const int p = a + q, j = kl - 1 - p;
    if (j < p) break;
    y[p] = low[q];
    if (j > p) y[j] = hi[wrap(base - q, S)];
  }
  if (c == 0 && t == 0) y[kl] = alpha;
#ifdef CLUSTER_EXCHANGE
  cluster_sync();  // nobody leaves while a neighbour might still write into its shared memory
#endif
}
#endif  // PERSISTENT

#ifdef BATCHED
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
#endif  // BATCHED
