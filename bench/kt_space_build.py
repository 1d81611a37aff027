"""Time Kernel Tuner 1.5's search-space construction on the T1 specs (the peer for
`cargo bench -p ktune-space --bench build` and `ktune space`).

    ~/.venvs/kt/bin/python bench/kt_space_build.py ../shared/data/t1/gemm.json

Runs in a fresh process per spec: the first construction, then the best of 5 repeats, the
feasible size, and the process's peak RSS.
"""
import resource
import sys
import time

from kernel_tuner.searchspace import Searchspace
from t1_spec import load


def main(path):
    tune_params, restrictions = load(path)
    t0 = time.perf_counter()
    space = Searchspace(tune_params, restrictions, 1024)
    first = time.perf_counter() - t0
    best = first
    for _ in range(5):
        t0 = time.perf_counter()
        Searchspace(tune_params, restrictions, 1024)
        best = min(best, time.perf_counter() - t0)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{path}: size {space.size}, first {first * 1e3:.1f} ms, best of 5 {best * 1e3:.1f} ms, peak RSS {peak:.1f} MiB")


if __name__ == "__main__":
    for p in sys.argv[1:]:
        main(p)
