// Planted mistake (durbin batched): beta = (1 + alpha^2) beta instead of (1 - alpha^2) beta. Every alpha
// from step 1 on is divided by a wrong beta. The template with one edit.

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
        beta = (1.0 + alpha * alpha) * beta;  // WRONG: the sign of alpha^2
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
