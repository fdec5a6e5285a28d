// Planted mistake (sdh histogram): the bucket index is one too high, so every pair is counted one
// bucket further out (and the far pairs pile up in the last bucket). The template with one edit.

extern "C" __global__ void sdh(const double* x, const double* y, const double* z, long long n, double w, int nb,
                               unsigned long long* hist)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n) return;  // the last block's spare threads have no atom
    double xi = x[i], yi = y[i], zi = z[i];
    for (long long j = i + 1; j < n; ++j) {
        double dx = xi - x[j], dy = yi - y[j], dz = zi - z[j];
        int bucket = (int)(sqrt(dx * dx + dy * dy + dz * dz) / w);
        atomicAdd(&hist[min(bucket + 1, nb - 1)], 1ull);  // WRONG: off by one, every pair one bucket up
    }
}
