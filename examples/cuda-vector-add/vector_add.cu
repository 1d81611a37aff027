// c = a + b, one element per thread. ktune passes every parameter as a define
// (here block_size_x), plus grid_size_x/y/z and the other block sizes.
extern "C" __global__ void vector_add(float *c, const float *a, const float *b, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}
