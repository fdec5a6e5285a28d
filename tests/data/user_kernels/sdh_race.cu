// Planted mistake (sdh histogram): a plain increment instead of atomicAdd. Threads that add to the
// same bucket at once read the same old count, and all but one of their additions are lost.

extern "C" __global__ void sdh(const double* x, const double* y, const double* z, long long n, double w, int nb,
                               unsigned long long* hist)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n) return;  // the last block's spare threads have no atom
    double xi = x[i], yi = y[i], zi = z[i];
    for (long long j = i + 1; j < n; ++j) {
        double dx = xi - x[j], dy = yi - y[j], dz = zi - z[j];
        int bucket = (int)(sqrt(dx * dx + dy * dy + dz * dz) / w);
        hist[min(bucket, nb - 1)] += 1;  // WRONG: a race, threads adding to the same bucket lose counts
    }
}
