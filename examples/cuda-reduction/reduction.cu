// The sum of n floats, in one kernel: every thread sums a grid-strided share of the input
// (vector elements per load), the block combines its threads' sums (a shared-memory tree or
// warp shuffles), and one atomic add per block adds the block's sum to out[0].
//
//   block_size_x   threads per block
//   num_blocks     blocks in the grid (the problem size, with grid_div_x = [])
//   vector         floats per load: 1 (float), 2 (float2) or 4 (float4)
//   use_shuffle    combine within a warp with __shfl_down_sync instead of shared memory
//   loop_unroll    unroll factor of the grid-stride loop

extern "C" __global__ void reduce_sum(float *out, const float *__restrict__ in, int n) {
    const int tid = threadIdx.x;
    const int stride = block_size_x * num_blocks;
    const int nv = n / vector;

#if vector == 4
    const float4 *v = reinterpret_cast<const float4 *>(in);
#elif vector == 2
    const float2 *v = reinterpret_cast<const float2 *>(in);
#else
    const float *v = in;
#endif

    float sum = 0.0f;
#pragma unroll loop_unroll
    for (int i = blockIdx.x * block_size_x + tid; i < nv; i += stride) {
#if vector == 4
        const float4 x = v[i];
        sum += (x.x + x.y) + (x.z + x.w);
#elif vector == 2
        const float2 x = v[i];
        sum += x.x + x.y;
#else
        sum += v[i];
#endif
    }
    // The tail that does not fill a vector.
    for (int i = nv * vector + blockIdx.x * block_size_x + tid; i < n; i += stride) {
        sum += in[i];
    }

#if use_shuffle
    // Within each warp, then across the block's warps through shared memory.
    __shared__ float warp_sums[(block_size_x + 31) / 32];
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) {
        sum += __shfl_down_sync(0xffffffffu, sum, offset);
    }
    if (tid % 32 == 0) {
        warp_sums[tid / 32] = sum;
    }
    __syncthreads();
    if (tid < 32) {
        sum = tid < (block_size_x + 31) / 32 ? warp_sums[tid] : 0.0f;
#pragma unroll
        for (int offset = 16; offset > 0; offset /= 2) {
            sum += __shfl_down_sync(0xffffffffu, sum, offset);
        }
    }
#else
    __shared__ float partial[block_size_x];
    partial[tid] = sum;
    __syncthreads();
#pragma unroll
    for (int s = block_size_x / 2; s > 0; s /= 2) {
        if (tid < s) {
            partial[tid] += partial[tid + s];
        }
        __syncthreads();
    }
    sum = partial[0];
#endif
    if (tid == 0) {
        atomicAdd(out, sum);
    }
}
