// The device's peak rates (sim/gpu/peaks.py measures them once per device and caches them):
//   copy4      a grid-stride float4 copy: read + write, the copy rate a memory-bound stage can reach
//   fma_fp32   CHAINS independent fused multiply-add chains per thread, unrolled: the FP32 FMA rate
//   fma_fp64   the same in double: the FP64 FMA rate (both are fma_chains)
// The chains' results are stored only when they equal an impossible value, so the compiler keeps every
// FMA but nothing is written.

#define CHAINS 8  // independent chains per thread: enough to cover the FMA pipe's latency
#define UNROLL 16

extern "C" __global__ void copy4(const float4* __restrict__ src, float4* __restrict__ dst, long long n)
{
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) dst[i] = src[i];
}

// fused(x, a, b) = x * a + b, rounded once, in the chain's type
__device__ __forceinline__ float fused(float x, float a, float b) { return __fmaf_rn(x, a, b); }
__device__ __forceinline__ double fused(double x, double a, double b) { return __fma_rn(x, a, b); }

template <typename T>
__device__ void fma_chains(T* out, int iterations, T a, T b)
{
    T x[CHAINS];
#pragma unroll
    for (int c = 0; c < CHAINS; ++c) x[c] = (T)(threadIdx.x + c);
    for (int i = 0; i < iterations; ++i) {
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
#pragma unroll
            for (int c = 0; c < CHAINS; ++c) x[c] = fused(x[c], a, b);
        }
    }
    T sum = 0;
#pragma unroll
    for (int c = 0; c < CHAINS; ++c) sum += x[c];
    if (sum == (T)-1.25) out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

extern "C" __global__ void fma_fp32(float* out, int iterations, float a, float b) { fma_chains(out, iterations, a, b); }
extern "C" __global__ void fma_fp64(double* out, int iterations, double a, double b) { fma_chains(out, iterations, a, b); }
