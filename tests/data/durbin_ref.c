/* The PolyBench durbin kernels as the C code writes them (3.2 with its 2D y and sum arrays, 4.x with
 * its z copy), for the CPU twin's bit-exactness tests.
 *   durbin_ref 3.2|4 N [R_FILE]
 * R_FILE: N raw little-endian doubles for r (default: the version's own init).
 * stderr: the version's dump of the output; stdout: each output element's bits as %016llx, one per
 * line, then "hash: %llu" (hash = hash*37 + bits, from 0). Build with -ffp-contract=off. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned long long bits_of(double v) { unsigned long long b; memcpy(&b, &v, sizeof b); return b; }

static void kernel_32(int n, double *y, double *sum, double *alpha, double *beta, double *r, double *out) {
#define Y(i, j) y[(size_t)(i) * n + (j)]
#define SUM(i, j) sum[(size_t)(i) * n + (j)]
  int i, k;
  Y(0, 0) = r[0];
  beta[0] = 1;
  alpha[0] = r[0];
  for (k = 1; k < n; k++) {
    beta[k] = beta[k-1] - alpha[k-1] * alpha[k-1] * beta[k-1];
    SUM(0, k) = r[k];
    for (i = 0; i <= k - 1; i++)
      SUM(i+1, k) = SUM(i, k) + r[k-i-1] * Y(i, k-1);
    alpha[k] = -SUM(k, k) * beta[k];
    for (i = 0; i <= k-1; i++)
      Y(i, k) = Y(i, k-1) + alpha[k] * Y(k-i-1, k-1);
    Y(k, k) = alpha[k];
  }
  for (i = 0; i < n; i++)
    out[i] = Y(i, n-1);
}

static void kernel_4(int n, double *r, double *y) {
  double *z = malloc(sizeof(double) * n);
  double alpha, beta, sum;
  int i, k;
  y[0] = -r[0];
  beta = 1.0;
  alpha = -r[0];
  for (k = 1; k < n; k++) {
    beta = (1-alpha*alpha)*beta;
    sum = 0.0;
    for (i=0; i<k; i++) {
      sum += r[k-i-1]*y[i];
    }
    alpha = - (r[k] + sum)/beta;
    for (i=0; i<k; i++) {
      z[i] = y[i] + alpha*y[k-i-1];
    }
    for (i=0; i<k; i++) {
      y[i] = z[i];
    }
    y[k] = alpha;
  }
  free(z);
}

int main(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "usage: durbin_ref 3.2|4 N [R_FILE]\n"); return 2; }
  int v32 = strcmp(argv[1], "3.2") == 0;
  int n = atoi(argv[2]), i;
  double *r = malloc(sizeof(double) * n), *out = malloc(sizeof(double) * n);
  if (argc > 3) {
    FILE *f = fopen(argv[3], "rb");
    if (!f || fread(r, sizeof(double), n, f) != (size_t)n) { fprintf(stderr, "cannot read r\n"); return 2; }
    fclose(f);
  } else {
    for (i = 0; i < n; i++) r[i] = v32 ? (i+1)/n/4.0 : (n+1-i);
  }
  if (v32) {
    double *y = malloc(sizeof(double) * n * n), *sum = malloc(sizeof(double) * n * n);
    double *alpha = malloc(sizeof(double) * n), *beta = malloc(sizeof(double) * n);
    kernel_32(n, y, sum, alpha, beta, r, out);
    for (i = 0; i < n; i++) {
      fprintf(stderr, "%0.2lf ", out[i]);
      if (i % 20 == 0) fprintf(stderr, "\n");
    }
  } else {
    kernel_4(n, r, out);
    fprintf(stderr, "==BEGIN DUMP_ARRAYS==\n");
    fprintf(stderr, "begin dump: %s", "y");
    for (i = 0; i < n; i++) {
      if (i % 20 == 0) fprintf(stderr, "\n");
      fprintf(stderr, "%0.2lf ", out[i]);
    }
    fprintf(stderr, "\nend   dump: %s\n", "y");
    fprintf(stderr, "==END   DUMP_ARRAYS==\n");
  }
  unsigned long long hash = 0;
  for (i = 0; i < n; i++) {
    printf("%016llx\n", bits_of(out[i]));
    hash = hash * 37 + bits_of(out[i]);
  }
  printf("hash: %llu\n", hash);
  return 0;
}
