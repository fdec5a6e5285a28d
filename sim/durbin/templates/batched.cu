// Your own batched Levinson-Durbin solver: the `batched` stage of the durbin scene.
//
// Many independent systems, one per row of r (systems x order, row-major). For each system solve the
// Yule-Walker system T y = -r, T = toeplitz([1, r[0], ..., r[order-2]]), with Durbin's recursion
// (PolyBench 4.x, Golub & Van Loan 4.7.1):
//     y[0] = alpha = -r[0];  beta = 1
//     for k = 1 .. order-1:
//         beta  = (1 - alpha*alpha) * beta
//         sum   = r[k-1]*y[0] + r[k-2]*y[1] + ... + r[0]*y[k-1]      (in this order, from 0.0)
//         alpha = -(r[k] + sum) / beta
//         y[i]  = y[i] + alpha * y[k-1-i]   for i < k, every new value from the OLD y
//         y[k]  = alpha
//
// Parameters:
//   r        the right-hand sides, systems x order
//   y        the solutions, systems x order
//   alphas   each system's alphas (the negated reflection coefficients): alphas[k] = alpha after step k
//   betas    each system's last beta (the normalised prediction error), one per system
//   systems  how many systems
//   order    the length of each system
//
// Launch rule: one thread per system, grid = ceil(systems / block) blocks of `block` threads (default 64).
// Compared exactly (bit for bit) with the CPU twin: sum in the order above and update y in pairs from the
// same two old values, as written below. (Built with --fmad=false: no fused multiply-adds.)
//
// This is the plainest way: each thread works on its own system's rows in global memory. The built-in
// variants stage the rows in shared memory or registers, or give a system a warp or a whole block.

extern "C" __global__ void batched(const double* r, double* y, double* alphas, double* betas, int systems,
                                   int order)
{
    int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= systems) return;  // the last block's spare threads have no system
    const double* rs = r + (long long)s * order;  // this thread's system
    double* ys = y + (long long)s * order;
    double* as = alphas + (long long)s * order;
    double alpha = -rs[0], beta = 1.0;
    ys[0] = alpha;
    as[0] = alpha;
    for (int k = 1; k < order; ++k) {
        beta = (1.0 - alpha * alpha) * beta;
        double sum = 0.0;
        for (int i = 0; i < k; ++i) sum += rs[k - 1 - i] * ys[i];
        alpha = -(rs[k] + sum) / beta;
        for (int i = 0; i < k / 2; ++i) {  // y[i] and y[k-1-i] from the same two old values
            int j = k - 1 - i;
            double yi = ys[i], yj = ys[j];
            ys[i] = yi + alpha * yj;
            ys[j] = yj + alpha * yi;
        }
        if (k & 1) ys[k / 2] = ys[k / 2] + alpha * ys[k / 2];  // the middle one, paired with itself
        ys[k] = alpha;
        as[k] = alpha;
    }
    betas[s] = beta;
}
