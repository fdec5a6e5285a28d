// Your own force kernel: the `forces` stage of the particles scene (CS 267 Homework 2).
//
// Each particle's acceleration from every particle within the cutoff. The particles are binned (a
// counting sort, the CPU twin's): the box is cut into nb x nb square bins at least a cutoff wide, so a
// particle's neighbours all lie in its own bin and the 8 around it (fewer at the walls).
//
// The force of j on i (the course's):  dx = x[j] - x[i], dy = y[j] - y[i], r2 = dx*dx + dy*dy;
//     nothing if r2 > cutoff^2;  r2 = max(r2, min_r^2);  r = sqrt(r2);
//     coef = (1 - cutoff / r) / r2 / mass;  ax += coef * dx;  ay += coef * dy
// (a particle's pair with itself adds nothing: dx = dy = 0).
//
// Parameters:
//   x, y     the n particles' positions
//   bin      each particle's bin: by * nb + bx (column bx, row by, from the bottom left)
//   start    nb*nb + 1 offsets into members: bin b holds members[start[b] .. start[b+1] - 1]
//   members  the particles' indices sorted by bin (in increasing index within a bin)
//   n        how many particles
//   nb       bins per side
//   ax, ay   the accelerations to write, one per particle
//
// Launch rule: one thread per particle, grid = ceil(n / block) blocks of `block` threads (default 128).
// Compared with the CPU twin (which adds the forces in increasing j) within what the particles
// verifier allows after a step: |difference| * dt^2 <= 1e-12 of the box side.
//
// This is the plainest way: each thread walks its particle's neighbour bins in global memory. The
// built-in kernels read the positions already sorted by bin (a bin row's three bins are one run) and fuse
// the move and the next binning into the same launch.

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
        for (int cx = max(bx - 1, 0); cx <= min(bx + 1, nb - 1); ++cx) {  // the columns left, at and right
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
