// C = A * B for n x n row-major floats, tiled through local memory. A work-group of
// block_size_x x block_size_y work-items computes a tile of block_size_x columns and
// block_size_y * tile_size_y rows of C; each work-item computes tile_size_y elements of one
// column, block_size_y rows apart. The reduction dimension goes in chunks of block_size_x.
__kernel void matmul(__global float *C, __global const float *A, __global const float *B,
                     const int n) {
    __local float sA[block_size_y * tile_size_y][block_size_x + padding];
    __local float sB[block_size_x][block_size_x + padding];
    const int tx = get_local_id(0);
    const int ty = get_local_id(1);
    const int col = get_group_id(0) * block_size_x + tx;
    const int row0 = get_group_id(1) * block_size_y * tile_size_y + ty;
    float acc[tile_size_y];
    for (int t = 0; t < tile_size_y; t++) {
        acc[t] = 0.0f;
    }
    for (int k0 = 0; k0 < n; k0 += block_size_x) {
        for (int t = 0; t < tile_size_y; t++) {
            sA[ty + t * block_size_y][tx] = A[(row0 + t * block_size_y) * n + k0 + tx];
        }
        for (int r = ty; r < block_size_x; r += block_size_y) {
            sB[r][tx] = B[(k0 + r) * n + col];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
#if unroll_k
#pragma unroll
#endif
        for (int k = 0; k < block_size_x; k++) {
            const float b = sB[k][tx];
            for (int t = 0; t < tile_size_y; t++) {
                acc[t] += sA[ty + t * block_size_y][k] * b;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (int t = 0; t < tile_size_y; t++) {
        C[(row0 + t * block_size_y) * n + col] = acc[t];
    }
}
