// A 2-D convolution: out (h x w) = in ((h + 6) x (w + 6)) convolved with a 7 x 7 filter,
// row-major floats. A work-group of block_size_x x block_size_y work-items computes a tile
// of (block_size_x * tile_size_x) x (block_size_y * tile_size_y) outputs; each work-item
// computes tile_size_x x tile_size_y of them, a work-group's width and height apart. With
// use_local, the work-group first copies the input its tile needs into local memory.
#define fw 7
#define fh 7

__kernel void convolution(__global float *out, __global const float *in,
                          __constant float *filter, const int w) {
    const int tx = get_local_id(0);
    const int ty = get_local_id(1);
    const int x0 = get_group_id(0) * block_size_x * tile_size_x;
    const int y0 = get_group_id(1) * block_size_y * tile_size_y;
    const int iw = w + fw - 1;
#if use_local
#define LW (block_size_x * tile_size_x + fw - 1)
#define LH (block_size_y * tile_size_y + fh - 1)
    __local float sh[LH][LW];
    for (int j = ty; j < LH; j += block_size_y) {
        for (int i = tx; i < LW; i += block_size_x) {
            sh[j][i] = in[(y0 + j) * iw + x0 + i];
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
    for (int b = 0; b < tile_size_y; b++) {
        for (int a = 0; a < tile_size_x; a++) {
            const int lx = tx + a * block_size_x;
            const int ly = ty + b * block_size_y;
            float sum = 0.0f;
            for (int j = 0; j < fh; j++) {
                for (int i = 0; i < fw; i++) {
#if use_local
                    sum += sh[ly + j][lx + i] * filter[j * fw + i];
#else
                    sum += in[(y0 + ly + j) * iw + x0 + lx + i] * filter[j * fw + i];
#endif
                }
            }
            out[(y0 + ly) * w + x0 + lx] = sum;
        }
    }
}
