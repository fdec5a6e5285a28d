"""The autocorrelation of a stable AR(p) process from its reflection coefficients, compiled."""

import numba
import numpy as np


@numba.njit(cache=True)
def ar_autocorr_kernel(kappas, n):
    """r of length n whose Durbin alphas are ``kappas`` then zeros (``inputs.ar_autocorr`` checks them)."""
    p = min(len(kappas), n)
    r = np.zeros(n)
    y = np.zeros(max(p, 1))
    z = np.zeros(max(p, 1))
    r[0] = -kappas[0]
    y[0] = kappas[0]
    alpha = kappas[0]
    beta = 1.0
    for k in range(1, p):  # Durbin backwards: choose alpha_k, solve for r[k]
        beta = (1.0 - alpha * alpha) * beta
        s = 0.0
        for i in range(k):
            s += r[k - i - 1] * y[i]
        alpha = kappas[k]
        r[k] = -alpha * beta - s
        for i in range(k):
            z[i] = y[i] + alpha * y[k - i - 1]
        for i in range(k):
            y[i] = z[i]
        y[k] = alpha
    for k in range(p, n):  # the AR(p) recurrence: Durbin's next alphas are zero
        s = 0.0
        for i in range(p):
            s += y[i] * r[k - 1 - i]
        r[k] = -s
    return r
