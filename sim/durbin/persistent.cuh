// Levinson-Durbin, one launch for a range of steps (durbin.cu's -DPERSISTENT build, which includes this after
// the scalar recursion and the reductions).
#pragma once
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
