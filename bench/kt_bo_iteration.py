"""Kernel Tuner 1.5's bayes_opt: strategy time per iteration at about 220 observations, the
peer of `cargo run --release -p ktune-cli --example bo_iteration_time`.

    KT_PEER_WORK=/tmp/ktpeer ~/.venvs/kt/bin/python bench/kt_bo_iteration.py dedispersion_A100 ...

Runs bayes_opt in simulation mode with max_fevals 210 and 230 (seeds 0-2) through the kt-peer
harness and reports (wall time at 230 - wall time at 210) / 20. Kernel Tuner's own
`total_strategy_time` is unreliable in simulation (it can come out negative), so the wall
time of the runs is used: in simulation it is almost all strategy time.
"""
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../shared/tools/kt-peer"))
import kt_run  # noqa: E402
from spaces import load_spaces, write_plain_cache  # noqa: E402

kt_run._install_kt_patches()
spaces = load_spaces(only=set(sys.argv[1:]))
for stem in sys.argv[1:]:
    space = spaces[stem]
    path = write_plain_cache(space)
    restriction = kt_run.make_restriction(set(space.cache.keys()), space.keys)
    per_iter = []
    for seed in range(3):
        a = kt_run.run_one(space, path, "bayes_opt", seed, 210, restriction)
        b = kt_run.run_one(space, path, "bayes_opt", seed, 230, restriction)
        per_iter.append((b["wall_seconds"] - a["wall_seconds"]) * 1000 / 20)
    print(f"{stem}: Kernel Tuner bayes_opt, wall ms per iteration at 210-230 observations: "
          f"median {statistics.median(per_iter):.1f} ms (seeds 0-2: {', '.join(f'{x:.1f}' for x in per_iter)})")
