// C = A * B for WIDTH x WIDTH floats, with shared-memory tiling and register tiling: each
// thread block computes a (block_size_y * tile_size_y) x (block_size_x * tile_size_x) tile
// of C, each thread tile_size_y x tile_size_x elements of it. The reduction dimension is
// stepped through in chunks of block_size_x, staged in shared memory.
//
// Tunable (defines from ktune): block_size_x, block_size_y, tile_size_x, tile_size_y,
// use_ldg, padding. The spec's constraints guarantee block_size_y * tile_size_y == block_size_x
// (the A and B chunks are loaded by the same threads) and that WIDTH divides evenly.

#ifndef WIDTH
#define WIDTH 4096
#endif

// Defaults for a tuner that does not tune these two (examples/python/matmul.py).
#ifndef use_ldg
#define use_ldg 0
#endif
#ifndef padding
#define padding 0
#endif

#if use_ldg
#define LOAD(p) __ldg(p)
#else
#define LOAD(p) (*(p))
#endif

extern "C" __global__ void matmul(float *C, const float *__restrict__ A, const float *__restrict__ B) {
    __shared__ float sA[block_size_y * tile_size_y][block_size_x];
    __shared__ float sB[block_size_x][block_size_x * tile_size_x + padding];

    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const int x = blockIdx.x * block_size_x * tile_size_x + tx;
    const int y = blockIdx.y * block_size_y * tile_size_y + ty;

    float sum[tile_size_y][tile_size_x];
#pragma unroll
    for (int i = 0; i < tile_size_y; i++) {
#pragma unroll
        for (int j = 0; j < tile_size_x; j++) {
            sum[i][j] = 0.0f;
        }
    }

    for (int k = 0; k < WIDTH; k += block_size_x) {
        __syncthreads();
#pragma unroll
        for (int i = 0; i < tile_size_y; i++) {
            sA[ty + block_size_y * i][tx] = LOAD(&A[(y + i * block_size_y) * WIDTH + k + tx]);
#pragma unroll
            for (int j = 0; j < tile_size_x; j++) {
                sB[ty + block_size_y * i][tx + j * block_size_x] =
                    LOAD(&B[(k + ty + block_size_y * i) * WIDTH + x + j * block_size_x]);
            }
        }
        __syncthreads();
#pragma unroll
        for (int kb = 0; kb < block_size_x; kb++) {
#pragma unroll
            for (int i = 0; i < tile_size_y; i++) {
                const float a = sA[ty + block_size_y * i][kb];
#pragma unroll
                for (int j = 0; j < tile_size_x; j++) {
                    sum[i][j] += a * sB[kb][tx + j * block_size_x];
                }
            }
        }
    }

#pragma unroll
    for (int i = 0; i < tile_size_y; i++) {
#pragma unroll
        for (int j = 0; j < tile_size_x; j++) {
            C[(y + i * block_size_y) * WIDTH + x + j * block_size_x] = sum[i][j];
        }
    }
}
