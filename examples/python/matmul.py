#!/usr/bin/env python
"""A Kernel Tuner matrix-multiply script tuned by ktune: the script is written for Kernel
Tuner (`import kernel_tuner`, `kernel_tuner.tune_kernel(...)`), and the only change is the
import, `import ktune as kernel_tuner`.

The kernel is `examples/cuda-matmul/matmul.cu` (the one `ktune tune` tunes there, for
4096 x 4096), built here for 512 x 512 through `compiler_options`. The space holds
configurations that fail only when compiled or launched (too much shared memory, more than
1024 threads per block): they are recorded as failures, and tuning goes on.

Run it on a machine with an NVIDIA GPU: `python examples/python/matmul.py`. Without one it
says so and exits.
"""

import os
import sys

import numpy

import ktune as kernel_tuner

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "..", "cuda-matmul", "matmul.cu")) as f:
    kernel_string = f.read()

problem_size = (512, 512)
size = numpy.prod(problem_size)

A = numpy.random.randn(*problem_size).astype(numpy.float32)
B = numpy.random.randn(*problem_size).astype(numpy.float32)
C = numpy.zeros_like(A)

args = [C, A, B]
tune_params = dict()
tune_params["block_size_x"] = [16 * 2**i for i in range(3)]
tune_params["block_size_y"] = [2**i for i in range(6)]
tune_params["tile_size_x"] = [2**i for i in range(4)]
tune_params["tile_size_y"] = [2**i for i in range(4)]

grid_div_x = ["block_size_x", "tile_size_x"]
grid_div_y = ["block_size_y", "tile_size_y"]

restrict = ["block_size_x==block_size_y*tile_size_y"]

metrics = dict()
metrics["GFLOP/s"] = lambda p: (2 * problem_size[0] ** 3 / 1e9) / (p["time"] / 1e3)

if __name__ == "__main__":
    if not kernel_tuner.cuda_available():
        print("skipped: no CUDA driver on this machine (libcuda.so); tune_kernel needs an NVIDIA GPU")
        sys.exit(0)
    results, env = kernel_tuner.tune_kernel(
        "matmul", kernel_string,
        problem_size, args, tune_params,
        grid_div_y=grid_div_y, grid_div_x=grid_div_x,
        restrictions=restrict, verbose=True,
        answer=[A @ B, None, None], atol=5e-3, metrics=metrics,
        compiler_options=["-DWIDTH=512"])
    failed = sum("__error__" in r for r in results)
    print(f"{len(results)} configurations measured on {env['device_name']}, {failed} failed")
