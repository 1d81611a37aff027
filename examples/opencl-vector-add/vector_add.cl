// c = a + b, work_per_item elements per work-item, strided by the global size so that
// neighbouring work-items read neighbouring elements. ktune passes every parameter as a
// define (block_size_x, work_per_item), plus grid_size_x/y/z.
__kernel void vector_add(__global float *c, __global const float *a,
                         __global const float *b, const int n) {
    int i = get_global_id(0);
    int stride = get_global_size(0);
    for (int k = 0; k < work_per_item; k++, i += stride) {
        if (i < n) {
            c[i] = a[i] + b[i];
        }
    }
}
