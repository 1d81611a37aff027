// C = A B for square row-major matrices of WIDTH x WIDTH floats, tiled through shared memory.
//
// A thread block computes a (block_size_y * tile_size_y) x (block_size_x * tile_size_x) tile
// of C, each thread tile_size_y x tile_size_x elements of it, block_size_x columns apart
// in x and block_size_y rows apart in y (so that neighbouring threads touch neighbouring
// addresses). The restriction block_size_x == block_size_y * tile_size_y makes the tile of A
// square, so every thread loads the same number of elements of A and of B.
#ifndef WIDTH
#define WIDTH 512
#endif

extern "C" __global__ void matmul_kernel(float *C, const float *A, const float *B) {
    __shared__ float tile_a[block_size_y * tile_size_y][block_size_x];
    __shared__ float tile_b[block_size_x][block_size_x * tile_size_x];

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
        #pragma unroll
        for (int i = 0; i < tile_size_y; i++) {
            tile_a[ty + block_size_y * i][tx] = A[(y + block_size_y * i) * WIDTH + k + tx];
            #pragma unroll
            for (int j = 0; j < tile_size_x; j++) {
                tile_b[ty + block_size_y * i][tx + block_size_x * j] =
                    B[(k + ty + block_size_y * i) * WIDTH + x + block_size_x * j];
            }
        }
        __syncthreads();

        for (int kk = 0; kk < block_size_x; kk++) {
            #pragma unroll
            for (int i = 0; i < tile_size_y; i++) {
                #pragma unroll
                for (int j = 0; j < tile_size_x; j++) {
                    sum[i][j] += tile_a[ty + block_size_y * i][kk] * tile_b[kk][tx + block_size_x * j];
                }
            }
        }
        __syncthreads();
    }

    #pragma unroll
    for (int i = 0; i < tile_size_y; i++) {
        #pragma unroll
        for (int j = 0; j < tile_size_x; j++) {
            C[(y + block_size_y * i) * WIDTH + x + block_size_x * j] = sum[i][j];
        }
    }
}
