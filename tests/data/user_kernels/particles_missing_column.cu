// Planted mistake (particles forces): the neighbour loop skips the bin column on the right, so every
// particle with a neighbour across its bin's right edge misses that neighbour's force. The template
// with one edit.

#define CUTOFF 0.01
#define MIN_R (CUTOFF / 100)
#define MASS 0.01

extern "C" __global__ void forces(const double* x, const double* y, const int* bin, const int* start,
                                  const int* members, int n, int nb, double* ax, double* ay)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;  // the last block's spare threads have no particle
    double xi = x[i], yi = y[i];
    int bx = bin[i] % nb, by = bin[i] / nb;
    double fx = 0.0, fy = 0.0;
    for (int cy = max(by - 1, 0); cy <= min(by + 1, nb - 1); ++cy) {      // the rows below, at and above
        for (int cx = max(bx - 1, 0); cx <= min(bx, nb - 1); ++cx) {  // WRONG: stops before the column on the right
            int b = cy * nb + cx;
            for (int m = start[b]; m < start[b + 1]; ++m) {
                int j = members[m];
                double dx = x[j] - xi, dy = y[j] - yi;
                double r2 = dx * dx + dy * dy;
                if (r2 > CUTOFF * CUTOFF) continue;
                r2 = fmax(r2, MIN_R * MIN_R);
                double r = sqrt(r2);
                double coef = (1 - CUTOFF / r) / r2 / MASS;
                fx += coef * dx;
                fy += coef * dy;
            }
        }
    }
    ax[i] = fx;
    ay[i] = fy;
}
