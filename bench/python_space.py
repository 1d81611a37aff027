"""Search-space construction from Python: ktune.SearchSpace beside Kernel Tuner 1.5's
Searchspace, on the T1 specs, in one process (both installed in one virtualenv):

    python bench/python_space.py ../shared/data/t1/*.json

Both get the same tune_params dict and restriction strings; Kernel Tuner's thread limit is
set out of reach so that neither adds a restriction of its own (the sizes are checked
equal). Per spec: the first construction of each, then the best of 5, interleaved.
"""
import sys
import time

import ktune
from kernel_tuner.searchspace import Searchspace
from t1_spec import load


def timed(build):
    t0 = time.perf_counter()
    result = build()
    return time.perf_counter() - t0, result


def main(paths):
    print("| spec | configurations | ktune first (ms) | ktune best of 5 (ms) | Kernel Tuner first (ms) | Kernel Tuner best of 5 (ms) | ratio (best) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for path in paths:
        tune_params, restrictions = load(path)
        kt = lambda: Searchspace(tune_params, restrictions, 2**31)
        kn = lambda: ktune.SearchSpace(tune_params, restrictions)
        kn_first, ours = timed(kn)
        kt_first, theirs = timed(kt)
        assert len(ours) == theirs.size, (path, len(ours), theirs.size)
        kn_best, kt_best = kn_first, kt_first
        for _ in range(5):
            kn_best = min(kn_best, timed(kn)[0])
            kt_best = min(kt_best, timed(kt)[0])
        name = path.rsplit("/", 1)[-1]
        print(f"| {name} | {len(ours)} | {kn_first * 1e3:.1f} | {kn_best * 1e3:.1f} | {kt_first * 1e3:.1f} | {kt_best * 1e3:.1f} | {kt_best / kn_best:.1f}x |")


if __name__ == "__main__":
    main(sys.argv[1:])
