"""Kernel Tuner 1.5 tuning the three OpenCL examples on an OpenCL device (PoCL on the CPU
here), for the side-by-side comparison with `ktune tune examples/opencl-<kernel>/ktune.toml`;
with `--tool ktune`, the same script through `ktune.tune_kernel` (a Kernel Tuner script with
only the import changed), the OpenCL counterpart of bench/kt_cuda.py. Same kernel files,
parameters, restrictions (the toml's constraints), problem sizes, grid divisors, arguments
(in the kernel's order, scalars as numpy.int32), `--iterations` timed runs (7, as ktune), and
verification against the default configuration's output with the toml's atol.

    python3 bench/kt_opencl.py --kernel matmul --strategy random_sample --evals 10 --seed 0 --out kt.json
    python3 bench/kt_opencl.py --tool ktune --kernel matmul --strategy random_sample --evals 10 --seed 0 --out ktpy.json

Needs numpy and an OpenCL driver with a device (`clinfo -l`; `--platform`/`--device` pick
it, 0 and 0 by default); Kernel Tuner 1.5.0 and pyopencl (lang="OpenCL") for
`--tool kernel_tuner` and for the reference output, which Kernel Tuner's `run_kernel`
computes (ktune has no `run_kernel`); with `--tool ktune` that happens in a child process, so
that the tuning process never loads Kernel Tuner. `--reference FILE` keeps the reference in an
.npz file and reuses it when it exists (the same reference for both tools).

Kernel Tuner prepends `#define`s for grid_size_x/y/z, block_size_x/y/z, every tunable
parameter and `kernel_tuner`; the kernels use those names. Its OpenCL backend launches with
local size (block_size_x, block_size_y, block_size_z) and global size = the number of
work-groups (problem size over the grid divisors, rounded up) times the local size.

PoCL keeps built programs in its kernel cache (~/.cache/pocl/kcache), so a second run builds
from the cache; `--no-build-cache` sets POCL_KERNEL_CACHE=0 (and PYOPENCL_NO_CACHE=1) before
any OpenCL is loaded, in this process and the reference child, so every build is cold.

Prints one JSON summary: the best time and configuration, the evaluation and the wall time at
which it was first reached, the total wall time, the tool's own overhead per evaluation (wall
time not spent compiling, verifying or benchmarking; for ktune, whose compiles overlap, the
time it spent outside its evaluation calls), the share of wall time spent building programs
(the sum of the results' compile_time over the wall time), and the failed configurations.
"""
import argparse
import datetime
import json
import os
import pathlib
import random
import time

import subprocess
import sys

import numpy as np

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


def vector_add(rng):
    n = 4194304
    c = np.zeros(n, dtype=np.float32)
    a = rng.random(n, dtype=np.float32)
    b = rng.random(n, dtype=np.float32)
    return dict(
        kernel_name="vector_add",
        source=EXAMPLES / "opencl-vector-add" / "vector_add.cl",
        problem_size=(n,),
        arguments=[c, a, b, np.int32(n)],
        tune_params={
            "block_size_x": [16, 32, 64, 128, 256, 512, 1024],
            "work_per_item": [1, 2, 4, 8],
        },
        restrictions=None,
        grid_div_x=["block_size_x", "work_per_item"],
        grid_div_y=None,
        default={"block_size_x": 64, "work_per_item": 1},
        outputs=[0],
        atol=1e-6,
    )


def matmul(rng):
    n = 512
    c = np.zeros(n * n, dtype=np.float32)
    a = rng.random(n * n, dtype=np.float32)
    b = rng.random(n * n, dtype=np.float32)
    return dict(
        kernel_name="matmul",
        source=EXAMPLES / "opencl-matmul" / "matmul.cl",
        problem_size=(n, n),
        arguments=[c, a, b, np.int32(n)],
        tune_params={
            "block_size_x": [8, 16, 32, 64],
            "block_size_y": [1, 2, 4, 8, 16],
            "tile_size_y": [1, 2, 4, 8],
            "padding": [0, 1],
            "unroll_k": [0, 1],
        },
        restrictions=[
            "16 <= block_size_x * block_size_y <= 1024",
            "block_size_x % block_size_y == 0",
            "4 * (block_size_y * tile_size_y + block_size_x) * (block_size_x + padding) <= 32768",
            "512 % (block_size_y * tile_size_y) == 0",
        ],
        # The toml gives no grid_div_x: block_size_x, the default of both tools.
        grid_div_x=None,
        grid_div_y=["block_size_y", "tile_size_y"],
        default={"block_size_x": 16, "block_size_y": 16, "tile_size_y": 1, "padding": 0, "unroll_k": 0},
        outputs=[0],
        atol=1e-3,
    )


def convolution(rng):
    w, fw, fh = 1024, 7, 7
    out = np.zeros(w * w, dtype=np.float32)
    image = rng.random((w + fh - 1) * (w + fw - 1), dtype=np.float32)
    filt = rng.random(fw * fh, dtype=np.float32)
    return dict(
        kernel_name="convolution",
        source=EXAMPLES / "opencl-convolution" / "convolution.cl",
        problem_size=(w, w),
        # The filter is a `__constant float *` kernel argument: an ordinary buffer in OpenCL
        # (Kernel Tuner's OpenCL backend has no cmem_args).
        arguments=[out, image, filt, np.int32(w)],
        tune_params={
            "block_size_x": [8, 16, 32, 64, 128],
            "block_size_y": [1, 2, 4, 8, 16],
            "tile_size_x": [1, 2, 4],
            "tile_size_y": [1, 2, 4],
            "use_local": [0, 1],
        },
        restrictions=[
            "16 <= block_size_x * block_size_y <= 1024",
            "1024 % (block_size_x * tile_size_x) == 0",
            "1024 % (block_size_y * tile_size_y) == 0",
            "use_local == 0 or 4 * (block_size_x * tile_size_x + 6) * (block_size_y * tile_size_y + 6) <= 32768",
        ],
        grid_div_x=["block_size_x", "tile_size_x"],
        grid_div_y=["block_size_y", "tile_size_y"],
        default={"block_size_x": 16, "block_size_y": 16, "tile_size_x": 1, "tile_size_y": 1, "use_local": 0},
        outputs=[0],
        atol=1e-4,
    )


KERNELS = {"vector_add": vector_add, "matmul": matmul, "convolution": convolution}

parser = argparse.ArgumentParser()
parser.add_argument("--kernel", choices=sorted(KERNELS), default="matmul")
parser.add_argument("--strategy", default="random_sample")
parser.add_argument("--seed", type=int, default=1)
parser.add_argument("--strategy-options", type=json.loads, default={},
                    help='JSON object added to strategy_options (ktune: the strategy\'s own options, e.g. \'{"feasibility": true}\')')
parser.add_argument("--evals", type=int, default=40)
parser.add_argument("--iterations", type=int, default=7, help="timed runs per configuration")
parser.add_argument("--platform", type=int, default=0)
parser.add_argument("--device", type=int, default=0)
parser.add_argument("--out", default="kt-opencl.json")
parser.add_argument("--no-verify", action="store_true", help="tune without checking outputs")
parser.add_argument("--no-build-cache", action="store_true",
                    help="disable PoCL's kernel cache (and pyopencl's) so that every program is built cold")
parser.add_argument("--verbose", action="store_true", help="the tool's own verbose output")
parser.add_argument("--tool", choices=["kernel_tuner", "ktune"], default="kernel_tuner")
parser.add_argument("--reference", help="an .npz file holding the reference output (written when missing)")
parser.add_argument("--reference-only", action="store_true", help="write --reference and stop")
args = parser.parse_args()

if args.no_build_cache:
    # Read when the OpenCL driver and pyopencl load, which happens below; inherited by the child.
    os.environ["POCL_KERNEL_CACHE"] = "0"
    os.environ["PYOPENCL_NO_CACHE"] = "1"

# Kernel Tuner 1.5's strategies take no seed option; they draw from numpy's and Python's
# global generators, seeded here.
random.seed(args.seed)
np.random.seed(args.seed)
k = KERNELS[args.kernel](np.random.default_rng(args.seed))
source = k["source"].read_text()
launch = dict(grid_div_x=k["grid_div_x"], lang="OpenCL", platform=args.platform, device=args.device)
if k["grid_div_y"] is not None:
    launch["grid_div_y"] = k["grid_div_y"]


def reference_outputs():
    """The default configuration's outputs (None for the other arguments), as Kernel Tuner's
    run_kernel computes them, from --reference when that file exists."""
    path = pathlib.Path(args.reference) if args.reference else None
    if path is not None and path.exists():
        return reference_outputs_from(path)
    if args.tool == "ktune":
        path = path or pathlib.Path(args.out).with_suffix(".reference.npz")
        child = [sys.executable, __file__, "--tool", "kernel_tuner", "--reference-only", "--reference", str(path),
                 "--kernel", args.kernel, "--seed", str(args.seed),
                 "--platform", str(args.platform), "--device", str(args.device)]
        subprocess.run(child, check=True)
        return reference_outputs_from(path)
    import kernel_tuner

    reference = kernel_tuner.run_kernel(k["kernel_name"], source, k["problem_size"], k["arguments"], k["default"], **launch)
    outputs = [reference[i] if i in k["outputs"] else None for i in range(len(k["arguments"]))]
    if path is not None:
        np.savez(path, **{f"out{i}": o for i, o in enumerate(outputs) if o is not None})
    return outputs


def reference_outputs_from(path):
    stored = np.load(path)
    return [stored[f"out{i}"] if f"out{i}" in stored else None for i in range(len(k["arguments"]))]


if args.reference_only:
    if not args.reference:
        sys.exit("--reference-only needs --reference FILE")
    reference_outputs()
    sys.exit(0)
answer = None if args.no_verify else reference_outputs()
if args.tool == "ktune":
    import ktune as tuner

    version = f"ktune-{tuner.__version__}"
    launch["seed"] = args.seed
else:
    import kernel_tuner as tuner

    version = f"kernel_tuner-{tuner.__version__}"

started_utc = datetime.datetime.now(datetime.timezone.utc)
started = time.perf_counter()
options = {"max_fevals": args.evals} if args.strategy != "brute_force" else None
if args.strategy_options:
    options = {**(options or {}), **args.strategy_options}
results, env = tuner.tune_kernel(
    k["kernel_name"], source, k["problem_size"], k["arguments"], k["tune_params"],
    restrictions=k["restrictions"], answer=answer, atol=k["atol"],
    strategy=args.strategy, strategy_options=options,
    iterations=args.iterations, verbose=args.verbose, quiet=not args.verbose, **launch,
)
wall = time.perf_counter() - started


def elapsed(r):
    t = datetime.datetime.fromisoformat(r["timestamp"])
    return (t - started_utc).total_seconds()


ok = [r for r in results if isinstance(r.get("time"), (int, float))]
best = min(ok, key=lambda r: r["time"]) if ok else None
first_best = next((i for i, r in enumerate(results) if r is best), None)
compile_s = sum(r.get("compile_time", 0) for r in results) / 1000
spent = sum((r.get("compile_time", 0) + r.get("benchmark_time", 0) + r.get("verification_time", 0)) / 1000 for r in results)
# The tool's own time: for Kernel Tuner, which evaluates one configuration at a time, the wall
# time less what its results say was spent compiling, verifying and benchmarking (its warm-up
# run counts as overhead). ktune compiles a batch of configurations in parallel, so those times
# overlap and their sum can exceed the wall time; its overhead is the time it spent outside
# evaluating (its framework_time and strategy_time, measured around the evaluation calls).
own = sum((r.get("framework_time", 0) + r.get("strategy_time", 0)) / 1000 for r in results)
overhead = own if args.tool == "ktune" else wall - spent
summary = {
    "tool": version,
    "kernel": args.kernel,
    "strategy": args.strategy,
    "strategy_options": args.strategy_options,
    "seed": args.seed,
    "iterations": args.iterations,
    "verified": not args.no_verify,
    "build_cache": not args.no_build_cache,
    "evaluations": len(results),
    # Kernel Tuner counts a revisited configuration (served from its cache) as an evaluation.
    "unique_configurations": len({tuple(r[p] for p in k["tune_params"]) for r in results}),
    "failed": len(results) - len(ok),
    "best_time_ms": best["time"] if best else None,
    "best": {p: best[p] for p in k["tune_params"]} if best else None,
    "best_at_evaluation": None if first_best is None else first_best + 1,
    "best_at_wall_s": elapsed(best) if best else None,
    "wall_s": wall,
    "overhead_per_evaluation_ms": 1000 * overhead / max(len(results), 1),
    "compile_verify_benchmark_s": spent,
    "compile_s": compile_s,
    "compile_share": compile_s / wall if wall > 0 else None,
    "device": env.get("device_name"),
}
print(json.dumps(summary))
pathlib.Path(args.out).write_text(json.dumps({"summary": summary, "results": results}, default=str))
