"""Kernel Tuner 1.5 tuning examples/cuda-matmul on the same GPU, for the comparison with
`ktune tune examples/cuda-matmul/ktune.toml` (issue 7). Same kernel file, parameters,
restrictions, problem size, 7 timed iterations, 40 evaluations, verification against the
default configuration's output.

    python3 bench/kt_cuda_matmul.py --strategy bayes_opt --seed 1 --out kt-bo.json

Needs kernel_tuner==1.5.0, numpy and a CUDA backend (cuda-python for lang="NVCUDA", or
pycuda / cupy) on a GPU machine; prints the best time and the tuner's overhead per
evaluation (wall time not spent compiling, benchmarking or verifying).
"""
import argparse
import json
import pathlib
import time

import numpy as np
import kernel_tuner

HERE = pathlib.Path(__file__).resolve().parent.parent / "examples" / "cuda-matmul"
WIDTH = 4096

parser = argparse.ArgumentParser()
parser.add_argument("--strategy", default="bayes_opt")
parser.add_argument("--seed", type=int, default=1)
parser.add_argument("--evals", type=int, default=40)
parser.add_argument("--lang", default="NVCUDA")
parser.add_argument("--out", default="kt-cuda-matmul.json")
args = parser.parse_args()

rng = np.random.default_rng(args.seed)
A = rng.random((WIDTH, WIDTH), dtype=np.float32)
B = rng.random((WIDTH, WIDTH), dtype=np.float32)
C = np.zeros_like(A)

tune_params = {
    "block_size_x": [16, 32, 64],
    "block_size_y": [1, 2, 4, 8, 16, 32],
    "tile_size_x": [1, 2, 4, 8],
    "tile_size_y": [1, 2, 4, 8],
    "use_ldg": [0, 1],
    "padding": [0, 1],
}
restrictions = [
    "block_size_x == block_size_y * tile_size_y",
    "32 <= block_size_x * block_size_y <= 1024",
    "4 * (block_size_y * tile_size_y * block_size_x + block_size_x * (block_size_x * tile_size_x + padding)) <= 49152",
    "4096 % (block_size_x * tile_size_x) == 0 and 4096 % (block_size_y * tile_size_y) == 0",
]
source = (HERE / "matmul.cu").read_text()
common = dict(
    grid_div_x=["block_size_x", "tile_size_x"],
    grid_div_y=["block_size_y", "tile_size_y"],
    restrictions=restrictions,
    lang=args.lang,
    iterations=7,
    verbose=False,
    quiet=True,
)

# The reference output: the default configuration, as ktune uses it.
default = {"block_size_x": 16, "block_size_y": 16, "tile_size_x": 1, "tile_size_y": 1, "use_ldg": 0, "padding": 0}
reference = kernel_tuner.run_kernel("matmul", source, (WIDTH, WIDTH), [C, A, B], default,
                                    grid_div_x=common["grid_div_x"], grid_div_y=common["grid_div_y"], lang=args.lang)
answer = [reference[0], None, None]

started = time.perf_counter()
results, env = kernel_tuner.tune_kernel(
    "matmul", source, (WIDTH, WIDTH), [C, A, B], tune_params,
    answer=answer, atol=1e-2,
    strategy=args.strategy,
    strategy_options={"max_fevals": args.evals, "seed": args.seed} if args.strategy != "brute_force" else None,
    **common,
)
wall = time.perf_counter() - started
ok = [r for r in results if isinstance(r.get("time"), (int, float))]
best = min(ok, key=lambda r: r["time"]) if ok else None
spent = sum((r.get("compile_time", 0) + r.get("benchmark_time", 0) + r.get("verification_time", 0)) / 1000 for r in results)
summary = {
    "tool": f"kernel_tuner-{kernel_tuner.__version__}",
    "strategy": args.strategy,
    "evaluations": len(results),
    "best_time_ms": best["time"] if best else None,
    "best": {k: best[k] for k in tune_params} if best else None,
    "wall_s": wall,
    "overhead_per_evaluation_s": (wall - spent) / max(len(results), 1),
    "device": env.get("device_name"),
}
print(json.dumps(summary, indent=2))
pathlib.Path(args.out).write_text(json.dumps({"summary": summary, "results": results}, default=str))
