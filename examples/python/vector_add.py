#!/usr/bin/env python
"""Kernel Tuner's minimal example, tuned by ktune: a Kernel Tuner script with one change, the
import (`from kernel_tuner import tune_kernel` becomes `from ktune import tune_kernel`).

Run it on a machine with an NVIDIA GPU: `python examples/python/vector_add.py`. Without one it
says so and exits.
"""

import sys

import numpy

import ktune
from ktune import tune_kernel

kernel_string = """
__global__ void vector_add(float *c, float *a, float *b, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}
"""


def tune():
    size = 10_000_000
    a = numpy.random.randn(size).astype(numpy.float32)
    b = numpy.random.randn(size).astype(numpy.float32)
    c = numpy.zeros_like(b)
    n = numpy.int32(size)
    args = [c, a, b, n]

    tune_params = dict()
    tune_params["block_size_x"] = [128 + 64 * i for i in range(15)]

    return tune_kernel("vector_add", kernel_string, (size, 1), args, tune_params, answer=[a + b, None, None, None])


if __name__ == "__main__":
    if not ktune.cuda_available():
        print("skipped: no CUDA driver on this machine (libcuda.so); tune_kernel needs an NVIDIA GPU")
        sys.exit(0)
    results, env = tune()
    print(f"{len(results)} configurations measured on {env['device_name']}")
