// 2-D convolution of an image_width x image_height image with a filter_width x
// filter_height filter (a "valid" convolution of an input image that carries a border of
// filter - 1 pixels), in the style of Kernel Tuner's convolution example and the BAT
// convolution benchmark, whose parameters it shares:
//
//   block_size_x, block_size_y   threads per block
//   tile_size_x, tile_size_y     outputs per thread in x and y
//   use_shmem                    stage the block's input tile in shared memory
//   use_padding                  one extra float per shared-memory row (bank conflicts)
//   read_only                    load the input through the read-only data cache (__ldg)
//   use_cmem                     read the filter from constant memory (d_filter) instead of
//                                the `filter` argument
//   filter_width, filter_height  the filter's size
//
// Every configuration sums the filter taps in the same order, so outputs agree up to
// FMA contraction.

#ifndef image_width
#define image_width 4096
#endif
#ifndef image_height
#define image_height 4096
#endif
#define border_width (filter_width - 1)
#define border_height (filter_height - 1)
#define input_width (image_width + border_width)
#define input_height (image_height + border_height)

// The input tile a block needs, and its row stride in shared memory.
#define SH_W (block_size_x * tile_size_x + border_width)
#define SH_H (block_size_y * tile_size_y + border_height)
#define SH_STRIDE (SH_W + use_padding)

#if read_only
#define LOAD(p) __ldg(p)
#else
#define LOAD(p) (*(p))
#endif

#if use_cmem
__constant__ float d_filter[filter_height * filter_width];
#define FILTER(i) d_filter[i]
#else
#define FILTER(i) LOAD(&filter[i])
#endif

extern "C" __global__ void convolution_kernel(float *output, const float *__restrict__ input,
                                              const float *__restrict__ filter) {
    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const int bx = blockIdx.x * block_size_x * tile_size_x;
    const int by = blockIdx.y * block_size_y * tile_size_y;

#if use_shmem
    __shared__ float sh_input[SH_H][SH_STRIDE];
    for (int i = ty; i < SH_H; i += block_size_y) {
        for (int j = tx; j < SH_W; j += block_size_x) {
            const int row = by + i;
            const int col = bx + j;
            // Blocks at the right and bottom edges may reach past the input when the tile
            // does not divide the image.
            sh_input[i][j] = (row < input_height && col < input_width)
                                 ? LOAD(&input[row * input_width + col])
                                 : 0.0f;
        }
    }
    __syncthreads();
#define IN(r, c) sh_input[ty + (r)][tx + (c)]
#else
#define IN(r, c) LOAD(&input[min(by + ty + (r), input_height - 1) * input_width + \
                             min(bx + tx + (c), input_width - 1)])
#endif

    float sum[tile_size_y][tile_size_x];
#pragma unroll
    for (int yi = 0; yi < tile_size_y; yi++) {
#pragma unroll
        for (int xi = 0; xi < tile_size_x; xi++) {
            sum[yi][xi] = 0.0f;
        }
    }

    for (int i = 0; i < filter_height; i++) {
#pragma unroll
        for (int j = 0; j < filter_width; j++) {
            const float w = FILTER(i * filter_width + j);
#pragma unroll
            for (int yi = 0; yi < tile_size_y; yi++) {
#pragma unroll
                for (int xi = 0; xi < tile_size_x; xi++) {
                    sum[yi][xi] += IN(yi * block_size_y + i, xi * block_size_x + j) * w;
                }
            }
        }
    }

#pragma unroll
    for (int yi = 0; yi < tile_size_y; yi++) {
        const int y = by + ty + yi * block_size_y;
#pragma unroll
        for (int xi = 0; xi < tile_size_x; xi++) {
            const int x = bx + tx + xi * block_size_x;
            if (y < image_height && x < image_width) {
                output[y * image_width + x] = sum[yi][xi];
            }
        }
    }
}
