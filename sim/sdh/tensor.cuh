// The `tensor` histogram kernel (sdh.cu -DTENSOR): every tile's squared distances come from the
// float64 tensor cores, and a pair is counted by the integer part of its squared distance in bucket
// units: no square root, no division, no conversion per pair.
//
// Coordinates are centred on the points' box and divided by w on the host (q = (p - c) / w), so a
// pair's bucket is floor(sqrt(D)) with D = |q_i - q_j|^2, and the bucket edges are the squares b^2
// of integers. The kernel counts each pair in the fine counter floor(D) (one per integer of D, per
// block, in shared memory; counter floor(D) + 1, see C below) and folds the fine counters into
// buckets at the end: fine counter k belongs to bucket isqrt(k - 1), exactly, because no square lies
// strictly between two consecutive integers.
//
// D on the tensor cores: D = |a|^2 + |b|^2 - 2 a.b, one mma.sync m8n8k4 (f64) per 8 x 8 pairs with
//   A row i    = (qx, qy, qz, |q_i|^2)          B column j = (-2 qx, -2 qy, -2 qz, 1)
//   C column j = |q_j|^2 - E + 1                so the result is s = D - E + 1, rounded (s > 0: E < 1/2).
// Error bound. u = 2^-53; R^2 = the largest |q|^2 (as the host computes it); u' = u (R^2 + 1); the
// host sets E = 2^-44 (R^2 + 1) = 512 u'. D_true = |p_i - p_j|^2 / w^2 exactly (independent of c).
//   - q = fl(fl(p - c) / w): each coordinate errs by <= 2.01 u R, the difference vector by
//     |dv| <= 2 * 2.01 u R sqrt 3 <= 7 u R, so | |v + dv|^2 - |v|^2 | <= 2 |v| |dv| + |dv|^2 <= 28.1 u R^2
//     (|v| <= 2R);
//   - |q|^2 on the host (<= 3 roundings each, two of them in D): <= 6.1 u R^2; C = |q_j|^2 - E + 1:
//     <= 2.1 u (R^2 + 1);
//   - the MMA: four products and their sum with C, whose magnitudes add up to at most
//     |a|^2 + 2 |a| |b| + |b|^2 + E + 1 <= 4.01 (R^2 + 1); at even a full unit (2u) per operation (PTX
//     specifies round-to-nearest; this leaves room for any order of the sum), <= 10 u * 4.01 (R^2 + 1)
//     <= 40.2 u'.
//   So s = D_true - E + 1 + eps with |eps| <= 77 u'.
//   - the course's arithmetic (fl(dx), three squares, two sums, sqrt, division) errs on d / w by
//     less than 6u relatively, so its (int)(d / w) is floor(sqrt(D_true)) unless D_true lies within
//     6u (2 D + sqrt D) <= 18 u (4 R^2 + 1) <= 72 u' of a square b^2 (|sqrt D - b| = |D - b^2| /
//     (sqrt D + b), b <= sqrt D + 1).
//   Together: [D_true + 1 - 72u', D_true + 1 + 72u'] lies in [s + E - 149u', s + E + 149u'], strictly
//   inside (s, s + 2E). When floor(s) equals floor(s + 2E) (the sum rounded up, so an upper bound),
//   that interval holds no integer: floor(D_true) = floor(s) - 1, D_true is farther than 72u' from
//   every square, and the course's bucket is isqrt(floor(s) - 1). Otherwise (a pair within about E
//   ~ 1e-10 of a whole D at the course's W = 500: practically never; also every coincident pair) the
//   course's own float64 arithmetic decides, and the pair is counted at b^2 + 1.
// The test, two ways (-DONE_ADD where the host finds 2E <= 2^-32, e.g. W = 500 in the course's cube):
//   - floor(s) and floor(s + 2E) each from v + 2^52 rounded down, whose low word is floor(v) for
//     0 <= v < 2^31 (three float64 adds per pair);
//   - one add: t = 2^20 + s rounded down (0 < s < 2^20) is 2^20 + floor(s 2^32) / 2^32, so t's
//     mantissa holds floor(s) in its top 20 bits (the high word's low 20) and s's first 32 fraction
//     bits in the low word. Unless those are all ones, frac(s) < 1 - 2^-32 <= 1 - 2E and floor(s + 2E)
//     = floor(s).
//
// A warp owns 8 * ROW_GROUPS rows (its A fragments stay in registers); the block streams tiles of
// blockDim.x columns (B fragments and C from shared memory) from its own first row to n.
// Fragments (PTX ISA, mma.m8n8k4 .f64): A: row lane / 4, k lane % 4; B: k lane % 4, column lane / 4;
// C/D: row lane / 4, columns 2 (lane % 4) + {0, 1}.

// Four groups (32 rows per warp): eight halve the tile loads but doubled the checked tiles per block and
// the registers, and measured slower on an H200 at blocks 128 and 256 (75.7 ms at best against 73.1 ms at
// N = 512000, W = 500; 1342 against 1149 ms at 2048000). sim/sdh/kernels.py's TENSOR_ROWS follows it.
#define ROW_GROUPS 4

__device__ __forceinline__ void dmma(double& d0, double& d1, double a, double b, double c0, double c1)
{
    asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%4,%5};"
        : "=d"(d0), "=d"(d1) : "d"(a), "d"(b), "d"(c0), "d"(c1));
}

// The pairs of this warp's rows with one tile's columns, counted in the fine counters.
template <bool CHECKED>
__device__ __forceinline__ void count_tile(const double (&a)[ROW_GROUPS], const double4* tb, const double* tc,
                                           unsigned* fine, long long first_i, long long tile_base, long long n,
                                           double two_e, const double* __restrict__ x, const double* __restrict__ y,
                                           const double* __restrict__ z, double w, int nb, int slots)
{
    int lane = threadIdx.x & 31, row = lane >> 2, quad = lane & 3;
    for (int c = 0; c < (int)blockDim.x; c += 8) {
        double b = ((const double*)tb)[4 * (c + row) + quad];
        double2 cc = *(const double2*)&tc[c + 2 * quad];
#pragma unroll
        for (int g = 0; g < ROW_GROUPS; ++g) {
            double s[2];
            dmma(s[0], s[1], a[g], b, cc.x, cc.y);
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                long long i = first_i + 8 * g, j = tile_base + c + 2 * quad + e;
                if (CHECKED && !(i < j && j < n)) continue;
#ifdef ONE_ADD
                double t = __dadd_rd(s[e], 1048576.0);  // 2^20 + s, rounded down: see above
                int k = __double2hiint(t) - 0x41300000;  // less 2^20's sign and exponent: a constant on the address
                if (__double2loint(t) == -1) {  // the fraction's 32 bits all ones: within 2^-32 of a whole D
#else
                const double magic = 4503599627370496.0;  // 2^52
                int k = __double2loint(__dadd_rd(s[e], magic));
                if (k != __double2loint(__dadd_rd(__dadd_ru(s[e], two_e), magic))) {  // near a whole D
#endif
                    int bucket = bucket64(x[i] - x[j], y[i] - y[j], z[i] - z[j], w, nb);
                    k = min(bucket * bucket + 1, slots - 1);  // a counter of that bucket
                }
                atomicAdd(&fine[k], 1u);
            }
        }
    }
}

// qa[i] = (qx, qy, qz, |q|^2), qb[j] = (-2qx, -2qy, -2qz, 1), cj[j] = |q_j|^2 - E + 1 (see above), x, y, z the
// original float64 coordinates (the course's arithmetic for rechecks); slots fine counters; two_e = 2E.
// The compiler's own register choice (64 at block 256, 24 bytes spilled; 72 at 128) measured fastest: budgets of
// 3, 4 or 8 blocks per SM (__launch_bounds__ second argument) took 78.8-146.2 ms at N = 512000 against 73.1.
extern "C" __global__ void __launch_bounds__(BLOCK) sdh(const double4* __restrict__ qa, const double4* __restrict__ qb,
                                                        const double* __restrict__ cj, const double* __restrict__ x,
                                                        const double* __restrict__ y, const double* __restrict__ z,
                                                        long long n, double w, int nb, int slots, double two_e,
                                                        u64* hist)
{
    extern __shared__ double4 shared4[];
    double4* tb = shared4;                        // the tile's B columns
    double* tc = (double*)(shared4 + blockDim.x);  // the tile's C values
    unsigned* fine = (unsigned*)(tc + blockDim.x);
    for (int k = threadIdx.x; k < slots; k += blockDim.x) fine[k] = 0;

    int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, row = lane >> 2, quad = lane & 3;
    long long rows = 8ll * ROW_GROUPS * (blockDim.x >> 5);
    long long base = blockIdx.x * rows;
    long long first_i = base + warp * 8 * ROW_GROUPS + row;  // this lane's row in row group 0
    double a[ROW_GROUPS];
#pragma unroll
    for (int g = 0; g < ROW_GROUPS; ++g) {
        long long i = first_i + 8 * g;
        a[g] = i < n ? ((const double*)qa)[4 * i + quad] : 0.0;
    }
    for (long long tile_base = base; tile_base < n; tile_base += blockDim.x) {
        __syncthreads();
        long long j = tile_base + threadIdx.x;
        tb[threadIdx.x] = j < n ? qb[j] : make_double4(0, 0, 0, 0);
        tc[threadIdx.x] = j < n ? cj[j] : 0.0;
        __syncthreads();
        // tiles that reach the block's rows or n count only j > i, j < n (then i < n too); the others all
        if (tile_base < base + rows || tile_base + blockDim.x > n)
            count_tile<true>(a, tb, tc, fine, first_i, tile_base, n, two_e, x, y, z, w, nb, slots);
        else
            count_tile<false>(a, tb, tc, fine, first_i, tile_base, n, two_e, x, y, z, w, nb, slots);
    }
    __syncthreads();
    for (int bucket = threadIdx.x; bucket < nb; bucket += blockDim.x) {  // fine counter k to bucket isqrt(k - 1)
        long long lo = (long long)bucket * bucket + 1, hi = bucket == nb - 1 ? slots : (long long)(bucket + 1) * (bucket + 1) + 1;
        u64 total = 0;
        for (long long k = lo; k < min(hi, (long long)slots); ++k) total += fine[k];
        if (total) atomicAdd(&hist[bucket], total);
    }
}
