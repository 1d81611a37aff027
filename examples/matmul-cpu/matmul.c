/* Tiled single-precision matrix multiplication C = A * B (N x N, row-major), a tunable
 * CPU kernel for ktune. Every tuning parameter is a preprocessor define:
 *
 *   TILE_I, TILE_J, TILE_K  tile sizes of the three loops
 *   UNROLL                  unroll factor of the innermost loop (1, 2, 4, 8)
 *   LOOP_ORDER              0..5 = ijk, ikj, jik, jki, kij, kji (tile loops and point loops)
 *   VECTORIZE               1: restrict pointers and `#pragma omp simd` on the inner loop
 *                           (a sum reduction when it runs over k; needs -fopenmp-simd)
 *
 * Usage: matmul [N]   (N defaults to 512). Only the multiplication is timed (best of 3, fewer
 * when slow); the result is checked against a checksum and a few exact dot products, and a
 * wrong result prints an error and exits with 1. Output: `time: <ms> ms` and a JSON line. */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef TILE_I
#define TILE_I 16
#endif
#ifndef TILE_J
#define TILE_J 16
#endif
#ifndef TILE_K
#define TILE_K 16
#endif
#ifndef UNROLL
#define UNROLL 1
#endif
#ifndef LOOP_ORDER
#define LOOP_ORDER 0
#endif
#ifndef VECTORIZE
#define VECTORIZE 0
#endif

#if VECTORIZE
#define RESTRICT __restrict__
#define SIMD _Pragma("omp simd")
#define SIMD_SUM _Pragma("omp simd reduction(+ : acc)")
#else
#define RESTRICT
#define SIMD
#define SIMD_SUM
#endif

#define STR_(x) #x
#define PRAGMA_(x) _Pragma(STR_(x))
#define UNROLL_PRAGMA(n) PRAGMA_(GCC unroll n)

#define TILE_i TILE_I
#define TILE_j TILE_J
#define TILE_k TILE_K

#define A(i, k) a[(size_t)(i) * n + (k)]
#define B(k, j) b[(size_t)(k) * n + (j)]
#define C(i, j) c[(size_t)(i) * n + (j)]

/* A loop over the tiles of index v: v##0 .. v##1 is the current tile. */
#define TILE_LOOP(v)                                              \
    for (int v##0 = 0; v##0 < n; v##0 += TILE_##v) {              \
        const int v##1 = v##0 + TILE_##v < n ? v##0 + TILE_##v : n;
/* A point loop over index v within its tile. */
#define POINT_LOOP(v) for (int v = v##0; v < v##1; v++) {

/* The innermost point loop, unrolled UNROLL times (plus a remainder loop). Over i or j it
 * updates a row or column of C in place; over k it sums a dot product in a register. */
#define INNER_UPDATE(v)                                           \
    {                                                             \
        const int nb = (v##1 - v##0) / UNROLL;                    \
        SIMD                                                      \
        for (int t = 0; t < nb; t++) {                            \
            UNROLL_PRAGMA(UNROLL)                                 \
            for (int u = 0; u < UNROLL; u++) {                    \
                const int v = v##0 + t * UNROLL + u;              \
                C(i, j) += A(i, k) * B(k, j);                     \
            }                                                     \
        }                                                         \
        for (int v = v##0 + nb * UNROLL; v < v##1; v++)           \
            C(i, j) += A(i, k) * B(k, j);                         \
    }
#define INNER_i INNER_UPDATE(i)
#define INNER_j INNER_UPDATE(j)
#define INNER_k                                                   \
    {                                                             \
        float acc = C(i, j);                                      \
        const int nb = (k1 - k0) / UNROLL;                        \
        SIMD_SUM                                                  \
        for (int t = 0; t < nb; t++) {                            \
            UNROLL_PRAGMA(UNROLL)                                 \
            for (int u = 0; u < UNROLL; u++) {                    \
                const int k = k0 + t * UNROLL + u;                \
                acc += A(i, k) * B(k, j);                         \
            }                                                     \
        }                                                         \
        for (int k = k0 + nb * UNROLL; k < k1; k++)               \
            acc += A(i, k) * B(k, j);                             \
        C(i, j) = acc;                                            \
    }

#define MATMUL(x, y, z)                                           \
    TILE_LOOP(x) TILE_LOOP(y) TILE_LOOP(z)                        \
    POINT_LOOP(x) POINT_LOOP(y) INNER_##z                         \
    } } } } }

static void matmul(int n, const float *RESTRICT a, const float *RESTRICT b,
                   float *RESTRICT c) {
#if LOOP_ORDER == 0
    MATMUL(i, j, k)
#elif LOOP_ORDER == 1
    MATMUL(i, k, j)
#elif LOOP_ORDER == 2
    MATMUL(j, i, k)
#elif LOOP_ORDER == 3
    MATMUL(j, k, i)
#elif LOOP_ORDER == 4
    MATMUL(k, i, j)
#elif LOOP_ORDER == 5
    MATMUL(k, j, i)
#else
#error "LOOP_ORDER must be 0..5 (ijk, ikj, jik, jki, kij, kji)"
#endif
}

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 512;
    if (n <= 0) {
        fprintf(stderr, "error: N must be a positive integer\n");
        return 1;
    }
    size_t nn = (size_t)n * n;
    float *a = malloc(nn * sizeof *a), *b = malloc(nn * sizeof *b), *c = malloc(nn * sizeof *c);
    if (!a || !b || !c) {
        fprintf(stderr, "error: out of memory for N = %d\n", n);
        return 1;
    }
    /* Small integers, so that every product and sum below is exact in float. */
    for (size_t x = 0; x < nn; x++) {
        a[x] = (float)((x * 7 + 3) % 5) - 2.0f; /* -2..2 */
        b[x] = (float)((x * 11 + 1) % 3) - 1.0f; /* -1..1 */
    }

    /* Best of 3 repetitions; a configuration slower than 300 ms in all is not repeated
     * further, so that hopeless configurations cost the tuner little time. */
    double best = INFINITY, spent = 0.0;
    for (int rep = 0; rep < 3 && spent < 300.0; rep++) {
        memset(c, 0, nn * sizeof *c);
        double t0 = now_ms();
        matmul(n, a, b, c);
        double t = now_ms() - t0;
        spent += t;
        if (t < best) best = t;
    }

    /* Checksum: sum(C) = sum_k (sum_i A[i][k]) * (sum_j B[k][j]). */
    double expect = 0.0, got = 0.0;
    for (int k = 0; k < n; k++) {
        double col = 0.0, row = 0.0;
        for (int i = 0; i < n; i++) col += a[(size_t)i * n + k];
        for (int j = 0; j < n; j++) row += b[(size_t)k * n + j];
        expect += col * row;
    }
    for (size_t x = 0; x < nn; x++) got += c[x];
    if (got != expect) {
        fprintf(stderr, "error: wrong result: checksum %.1f, expected %.1f\n", got, expect);
        return 1;
    }
    /* A few elements exactly, so that a misplaced value cannot hide in the sum. */
    for (int s = 0; s < 64; s++) {
        int i = (int)(((size_t)s * 2654435761u) % (size_t)n), j = (int)(((size_t)s * 40503u + 17) % (size_t)n);
        float dot = 0.0f;
        for (int k = 0; k < n; k++) dot += a[(size_t)i * n + k] * b[(size_t)k * n + j];
        if (c[(size_t)i * n + j] != dot) {
            fprintf(stderr, "error: wrong result: C[%d][%d] = %g, expected %g\n", i, j,
                    c[(size_t)i * n + j], dot);
            return 1;
        }
    }

    double gflops = 2.0 * n * n * (double)n / (best * 1e6);
    printf("time: %.3f ms\n", best);
    printf("{\"time\": %.3f, \"gflops\": %.3f}\n", best, gflops);
    free(a);
    free(b);
    free(c);
    return 0;
}
