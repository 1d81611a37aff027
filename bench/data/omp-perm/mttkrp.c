/* A dense MTTKRP, A(i,r) += B(i,j,k) C(j,r) D(k,r), parallelised with OpenMP over blocks of i,
 * with the four loops inside a block in any order (PERM, outermost first: 0 = i, 1 = j,
 * 2 = k, 3 = r), the OpenMP schedule and chunk, and the innermost loop's unrolling as defines.
 * Written for bench/omp_perm.sh: a compiler-tuning space with a permutation parameter. Prints
 * the best of 5 runs. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifndef PERM
#define PERM 0, 1, 2, 3
#endif
#ifndef BLOCK
#define BLOCK 8
#endif
#ifndef CHUNK
#define CHUNK 1
#endif
#ifndef DYNAMIC
#define DYNAMIC 0
#endif
#ifndef UNROLL
#define UNROLL 1
#endif

#define NI 96
#define NJ 64
#define NK 64
#define NR 32
#define STR(x) #x
#define PRAGMA(x) _Pragma(STR(x))

static const int p[4] = {PERM};
static float B[NI][NJ][NK], C[NJ][NR], D[NK][NR], A[NI][NR];

static void kernel(void) {
    const int n[4] = {BLOCK, NJ, NK, NR};
#if DYNAMIC
#pragma omp parallel for schedule(dynamic, CHUNK)
#else
#pragma omp parallel for schedule(static, CHUNK)
#endif
    for (int ib = 0; ib < NI; ib += BLOCK) {
        for (int a0 = 0; a0 < n[p[0]]; a0++)
            for (int a1 = 0; a1 < n[p[1]]; a1++)
                for (int a2 = 0; a2 < n[p[2]]; a2++) {
                    PRAGMA(GCC unroll UNROLL)
                    for (int a3 = 0; a3 < n[p[3]]; a3++) {
                        int x[4];
                        x[p[0]] = a0;
                        x[p[1]] = a1;
                        x[p[2]] = a2;
                        x[p[3]] = a3;
                        int i = ib + x[0];
                        A[i][x[3]] += B[i][x[1]][x[2]] * C[x[1]][x[3]] * D[x[2]][x[3]];
                    }
                }
    }
}

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(void) {
    srand(1);
    for (int i = 0; i < NI; i++)
        for (int j = 0; j < NJ; j++)
            for (int k = 0; k < NK; k++) B[i][j][k] = rand() / (float)RAND_MAX;
    for (int j = 0; j < NJ; j++)
        for (int r = 0; r < NR; r++) C[j][r] = rand() / (float)RAND_MAX;
    for (int k = 0; k < NK; k++)
        for (int r = 0; r < NR; r++) D[k][r] = rand() / (float)RAND_MAX;
    double best = 1e30;
    for (int rep = 0; rep < 5; rep++) {
        double t0 = now_ms();
        kernel();
        double t = now_ms() - t0;
        if (t < best) best = t;
    }
    double sum = 0;
    for (int i = 0; i < NI; i++)
        for (int r = 0; r < NR; r++) sum += A[i][r];
    printf("checksum: %g\ntime: %.4f ms\n", sum, best);
    return 0;
}
