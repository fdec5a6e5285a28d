// Your own distance histogram: the `histogram` stage of the sdh scene.
//
// Count every pair of atoms (i, j), i < j, into the bucket of its distance:
//     bucket = (int)(sqrt(dx*dx + dy*dy + dz*dz) / w)      (double precision, as the course computes it)
// A pair in the far corners of the cube can land one bucket past the last one (the course's 1.732 is
// below sqrt 3): count it in the last bucket, nb - 1. Never write outside hist[0 .. nb-1].
//
// Parameters:
//   x, y, z  the n atoms' coordinates (double, one array per axis)
//   n        how many atoms
//   w        the bucket width
//   nb       how many buckets
//   hist     the nb counts (64-bit); set to zero before every launch: only add to them
//
// Launch rule: one thread per atom, grid = ceil(n / block) blocks of `block` threads (default 256).
// The counts must equal the exact CPU histogram bucket for bucket.
//
// This is the plainest way (the built-in `naive` kernel): thread i pairs atom i with every later atom
// and adds one to the global count with an atomic (many threads add to the same bucket at once).
// Faster ones keep a histogram per block in shared memory, or stream tiles of atoms through it.

extern "C" __global__ void sdh(const double* x, const double* y, const double* z, long long n, double w, int nb,
                               unsigned long long* hist)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n) return;  // the last block's spare threads have no atom
    double xi = x[i], yi = y[i], zi = z[i];
    for (long long j = i + 1; j < n; ++j) {
        double dx = xi - x[j], dy = yi - y[j], dz = zi - z[j];
        int bucket = (int)(sqrt(dx * dx + dy * dy + dz * dz) / w);
        atomicAdd(&hist[min(bucket, nb - 1)], 1ull);
    }
}
