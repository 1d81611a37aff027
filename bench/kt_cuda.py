"""Kernel Tuner 1.5 tuning the three CUDA examples on the same GPU, for the side-by-side
comparison with `ktune tune examples/cuda-<kernel>/ktune.toml` (issue 19); with
`--tool ktune`, the same script through `ktune.tune_kernel` (issue 16: a Kernel Tuner script
with only the import changed). Same kernel files, parameters, restrictions, problem sizes,
arguments, 7 timed iterations, and verification against the default configuration's output.

    python3 bench/kt_cuda.py --kernel matmul --strategy bayes_opt --evals 40 --seed 1 --out kt.json
    python3 bench/kt_cuda.py --tool ktune --kernel matmul --strategy bayes_opt --evals 40 --seed 1 --out ktpy.json

Needs numpy on a GPU machine; Kernel Tuner 1.5.0 and cuda-python (lang="NVCUDA", NVRTC like
ktune) for `--tool kernel_tuner` and for the reference output, which Kernel Tuner's
`run_kernel` computes (ktune has no `run_kernel`); with `--tool ktune` that happens in a child
process, so that the tuning process never loads Kernel Tuner. `--reference FILE` keeps the
reference in an .npz file and reuses it when it exists (the same reference for both tools).
Prints one JSON summary: the best time and configuration, the evaluation and the wall time at
which it was first reached, the total wall time, and the tool's own overhead per evaluation
(wall time not spent compiling, verifying or benchmarking; for ktune, whose compiles overlap,
the time it spent outside its evaluation calls).
"""
import argparse
import datetime
import json
import pathlib
import random
import time

import subprocess
import sys

import numpy as np

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


def matmul(rng):
    width = 4096
    a = rng.random((width, width), dtype=np.float32)
    b = rng.random((width, width), dtype=np.float32)
    c = np.zeros_like(a)
    return dict(
        kernel_name="matmul",
        source=EXAMPLES / "cuda-matmul" / "matmul.cu",
        problem_size=(width, width),
        arguments=[c, a, b],
        tune_params={
            "block_size_x": [16, 32, 64],
            "block_size_y": [1, 2, 4, 8, 16, 32],
            "tile_size_x": [1, 2, 4, 8],
            "tile_size_y": [1, 2, 4, 8],
            "use_ldg": [0, 1],
            "padding": [0, 1],
        },
        restrictions=[
            "block_size_x == block_size_y * tile_size_y",
            "32 <= block_size_x * block_size_y <= 1024",
            "4 * (block_size_y * tile_size_y * block_size_x + block_size_x * (block_size_x * tile_size_x + padding)) <= 49152",
            "4096 % (block_size_x * tile_size_x) == 0 and 4096 % (block_size_y * tile_size_y) == 0",
        ],
        grid_div_x=["block_size_x", "tile_size_x"],
        grid_div_y=["block_size_y", "tile_size_y"],
        default={"block_size_x": 16, "block_size_y": 16, "tile_size_x": 1, "tile_size_y": 1, "use_ldg": 0, "padding": 0},
        outputs=[0],
        atol=1e-2,
        extra={},
    )


def convolution(rng):
    size, fw, fh = 4096, 15, 15
    output = np.zeros(size * size, dtype=np.float32)
    image = rng.random((size + fh - 1) * (size + fw - 1), dtype=np.float32)
    filt = rng.random(fw * fh, dtype=np.float32)
    return dict(
        kernel_name="convolution_kernel",
        source=EXAMPLES / "cuda-convolution" / "convolution.cu",
        problem_size=(size, size),
        arguments=[output, image, filt],
        tune_params={
            "block_size_x": [16 * i for i in range(1, 17)],
            "block_size_y": [1, 2, 4, 8, 16],
            "tile_size_x": [1, 2, 3, 4],
            "tile_size_y": [1, 2, 3, 4],
            "read_only": [0, 1],
            "use_padding": [0, 1],
            "use_shmem": [0, 1],
            "use_cmem": [1],
            "filter_height": [fh],
            "filter_width": [fw],
        },
        restrictions=[
            "use_padding == 0 or block_size_x % 32 != 0",
            "block_size_x * block_size_y <= 1024",
            "use_padding == 0 or use_shmem != 0",
            "use_shmem == 0 or (block_size_x * tile_size_x + filter_width - 1) * (block_size_y * tile_size_y + filter_height - 1) < 12 * 1024",
        ],
        grid_div_x=["block_size_x", "tile_size_x"],
        grid_div_y=["block_size_y", "tile_size_y"],
        default={"block_size_x": 16, "block_size_y": 16, "tile_size_x": 1, "tile_size_y": 1, "read_only": 0,
                 "use_padding": 1, "use_shmem": 1, "use_cmem": 1, "filter_height": fh, "filter_width": fw},
        outputs=[0],
        atol=1e-3,
        extra={"cmem_args": {"d_filter": filt}},
    )


def reduction(rng):
    n = 1 << 26
    data = rng.random(n, dtype=np.float32)
    out = np.zeros(1, dtype=np.float32)
    return dict(
        kernel_name="reduce_sum",
        source=EXAMPLES / "cuda-reduction" / "reduction.cu",
        problem_size="num_blocks",
        arguments=[out, data, np.int32(n)],
        tune_params={
            "block_size_x": [2**i for i in range(5, 11)],
            "num_blocks": [2**i for i in range(6, 13)],
            "vector": [1, 2, 4],
            "use_shuffle": [0, 1],
            "loop_unroll": [1, 2, 4, 8],
        },
        restrictions=None,
        grid_div_x=[],
        grid_div_y=None,
        default={"block_size_x": 256, "num_blocks": 1024, "vector": 1, "use_shuffle": 0, "loop_unroll": 1},
        outputs=[0],
        # Kernel Tuner's check is absolute only: 1e-4 of the sum (about 3.4e7), as ktune's rtol.
        atol=3.4e3,
        extra={},
    )


KERNELS = {"matmul": matmul, "convolution": convolution, "reduction": reduction}

parser = argparse.ArgumentParser()
parser.add_argument("--kernel", choices=sorted(KERNELS), default="matmul")
parser.add_argument("--strategy", default="bayes_opt")
parser.add_argument("--seed", type=int, default=1)
parser.add_argument("--strategy-options", type=json.loads, default={},
                    help='JSON object added to strategy_options (ktune: the strategy\'s own options, e.g. \'{"feasibility": true}\')')
parser.add_argument("--evals", type=int, default=40)
parser.add_argument("--lang", default="NVCUDA")
parser.add_argument("--out", default="kt-cuda.json")
parser.add_argument("--no-verify", action="store_true", help="tune without checking outputs")
parser.add_argument("--verbose", action="store_true", help="the tool's own verbose output")
parser.add_argument("--tool", choices=["kernel_tuner", "ktune"], default="kernel_tuner")
parser.add_argument("--reference", help="an .npz file holding the reference output (written when missing)")
parser.add_argument("--reference-only", action="store_true", help="write --reference and stop")
args = parser.parse_args()

# Kernel Tuner 1.5's strategies take no seed option; they draw from numpy's and Python's
# global generators, seeded here.
random.seed(args.seed)
np.random.seed(args.seed)
k = KERNELS[args.kernel](np.random.default_rng(args.seed))
source = k["source"].read_text()
launch = dict(grid_div_x=k["grid_div_x"], lang=args.lang, **k["extra"])
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
                 "--kernel", args.kernel, "--seed", str(args.seed), "--lang", args.lang]
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
    iterations=7, verbose=args.verbose, quiet=not args.verbose, **launch,
)
wall = time.perf_counter() - started


def elapsed(r):
    t = datetime.datetime.fromisoformat(r["timestamp"])
    return (t - started_utc).total_seconds()


ok = [r for r in results if isinstance(r.get("time"), (int, float))]
best = min(ok, key=lambda r: r["time"]) if ok else None
first_best = next((i for i, r in enumerate(results) if r is best), None)
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
    "verified": not args.no_verify,
    "evaluations": len(results),
    "failed": len(results) - len(ok),
    "best_time_ms": best["time"] if best else None,
    "best": {p: best[p] for p in k["tune_params"]} if best else None,
    "best_at_evaluation": None if first_best is None else first_best + 1,
    "best_at_wall_s": elapsed(best) if best else None,
    "wall_s": wall,
    "overhead_per_evaluation_ms": 1000 * overhead / max(len(results), 1),
    "compile_verify_benchmark_s": spent,
    "device": env.get("device_name"),
}
print(json.dumps(summary))
pathlib.Path(args.out).write_text(json.dumps({"summary": summary, "results": results}, default=str))
