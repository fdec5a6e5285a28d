// The device's peak rates (sim/peaks.py measures them once per device and caches them):
//   copy4      a grid-stride float4 copy: read + write, the copy rate a memory-bound stage can reach
//   fma_fp32   CHAINS independent fused multiply-add chains per thread, unrolled: the FP32 FMA rate
//   fma_fp64   the same in double: the FP64 FMA rate
// The chains' results are stored only when they equal an impossible value, so the compiler keeps every
// FMA but nothing is written.

#define CHAINS 8  // independent chains per thread: enough to cover the FMA pipe's latency
#define UNROLL 16

extern "C" __global__ void copy4(const float4* __restrict__ src, float4* __restrict__ dst, long long n)
{
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) dst[i] = src[i];
}

extern "C" __global__ void fma_fp32(float* out, int iterations, float a, float b)
{
    float x[CHAINS];
#pragma unroll
    for (int c = 0; c < CHAINS; ++c) x[c] = (float)(threadIdx.x + c);
    for (int i = 0; i < iterations; ++i) {
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
#pragma unroll
            for (int c = 0; c < CHAINS; ++c) x[c] = fmaf(x[c], a, b);
        }
    }
    float sum = 0.0f;
#pragma unroll
    for (int c = 0; c < CHAINS; ++c) sum += x[c];
    if (sum == -1.25f) out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

extern "C" __global__ void fma_fp64(double* out, int iterations, double a, double b)
{
    double x[CHAINS];
#pragma unroll
    for (int c = 0; c < CHAINS; ++c) x[c] = (double)(threadIdx.x + c);
    for (int i = 0; i < iterations; ++i) {
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
#pragma unroll
            for (int c = 0; c < CHAINS; ++c) x[c] = fma(x[c], a, b);
        }
    }
    double sum = 0.0;
#pragma unroll
    for (int c = 0; c < CHAINS; ++c) sum += x[c];
    if (sum == -1.25) out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}
