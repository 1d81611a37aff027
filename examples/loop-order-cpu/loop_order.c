/* C = A * B for N x N floats, tiled, with the three loops inside a tile in any of the six
 * orders: the order is a permutation parameter, given on the command line as its items
 * ("i,k,j": i outermost, j innermost). TILE and UNROLL come as -D defines.
 *
 *   gcc -O2 -DTILE=64 -DUNROLL=4 loop_order.c -o loop_order -lpthread && ./loop_order 512 i,k,j
 *
 * The multiplication runs on a worker thread with a 1 MiB stack, as in a thread pool, and
 * copies each B tile into a buffer on that stack: a 512 x 512 tile (1 MiB of floats) does not
 * fit and the program crashes. Nothing in the parameters says so: it is the hidden constraint
 * a tuner has to learn. The result is checked against 64 dot products computed in double
 * precision (a wrong result prints an error and exits with 1). Prints the best of 3 times:
 * `time: <ms> ms`.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef TILE
#define TILE 32
#endif
#ifndef UNROLL
#define UNROLL 1
#endif

#define STR(x) #x
#define XSTR(x) STR(x)
#define UNROLL_INNER _Pragma(XSTR(GCC unroll UNROLL))

static int N;
static float *A, *B, *C;

#define LI for (int i = 0; i < TILE; i++)
#define LJ for (int j = 0; j < TILE; j++)
#define LK for (int k = 0; k < TILE; k++)

/* One kernel per loop order (outermost, middle, innermost inside a tile). */
#define KERNEL(NAME, OUTER, MIDDLE, INNER)                                                  \
    static void NAME(void) {                                                                \
        for (int ii = 0; ii < N; ii += TILE)                                                \
            for (int kk = 0; kk < N; kk += TILE)                                            \
                for (int jj = 0; jj < N; jj += TILE) {                                      \
                    float bt[TILE][TILE];                                                   \
                    for (int k = 0; k < TILE; k++)                                          \
                        memcpy(bt[k], &B[(size_t)(kk + k) * N + jj], sizeof bt[k]);         \
                    OUTER MIDDLE UNROLL_INNER INNER C[(size_t)(ii + i) * N + jj + j] +=     \
                        A[(size_t)(ii + i) * N + kk + k] * bt[k][j];                        \
                }                                                                           \
    }

KERNEL(kernel_ijk, LI, LJ, LK)
KERNEL(kernel_ikj, LI, LK, LJ)
KERNEL(kernel_jik, LJ, LI, LK)
KERNEL(kernel_jki, LJ, LK, LI)
KERNEL(kernel_kij, LK, LI, LJ)
KERNEL(kernel_kji, LK, LJ, LI)

static void (*kernel)(void);

static void *worker(void *arg) {
    (void)arg;
    kernel();
    return NULL;
}

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s N i,j,k (the loop order, outermost first)\n", argv[0]);
        return 2;
    }
    N = atoi(argv[1]);
    if (N <= 0 || N % TILE != 0) {
        fprintf(stderr, "N = %s must be a positive multiple of TILE = %d\n", argv[1], TILE);
        return 2;
    }
    const char *orders[] = {"i,j,k", "i,k,j", "j,i,k", "j,k,i", "k,i,j", "k,j,i"};
    void (*kernels[])(void) = {kernel_ijk, kernel_ikj, kernel_jik, kernel_jki, kernel_kij, kernel_kji};
    kernel = NULL;
    for (int o = 0; o < 6; o++)
        if (strcmp(argv[2], orders[o]) == 0) kernel = kernels[o];
    if (!kernel) {
        fprintf(stderr, "unknown loop order `%s`: give the items i, j, k separated by commas\n", argv[2]);
        return 2;
    }
    size_t n2 = (size_t)N * N;
    A = malloc(n2 * sizeof *A);
    B = malloc(n2 * sizeof *B);
    C = malloc(n2 * sizeof *C);
    if (!A || !B || !C) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    for (size_t x = 0; x < n2; x++) {
        A[x] = (float)((x * 7 + 3) % 17) / 17.0f - 0.5f;
        B[x] = (float)((x * 5 + 1) % 13) / 13.0f - 0.5f;
    }
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 1 << 20);
    double best = INFINITY;
    for (int rep = 0; rep < 3; rep++) {
        memset(C, 0, n2 * sizeof *C);
        pthread_t t;
        double t0 = now_ms();
        if (pthread_create(&t, &attr, worker, NULL) != 0) {
            fprintf(stderr, "cannot start the worker thread\n");
            return 1;
        }
        pthread_join(t, NULL);
        double ms = now_ms() - t0;
        if (ms < best) best = ms;
    }
    for (int s = 0; s < 64; s++) {
        int i = (s * 37) % N, j = (s * 91 + 5) % N;
        double want = 0;
        for (int k = 0; k < N; k++) want += (double)A[(size_t)i * N + k] * B[(size_t)k * N + j];
        double got = C[(size_t)i * N + j];
        if (fabs(got - want) > 1e-3 * (1.0 + fabs(want))) {
            fprintf(stderr, "wrong result at C[%d][%d]: %g instead of %g\n", i, j, got, want);
            return 1;
        }
    }
    printf("time: %.3f ms\n", best);
    return 0;
}
