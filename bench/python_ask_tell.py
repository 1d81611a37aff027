"""Overhead of one ask/tell round trip from Python: ktune.Study (random, bayes_opt, tpe) beside
Optuna 5.0's ask/tell with its default sampler, on one discrete space, in one process:

    python bench/python_ask_tell.py [OBSERVATIONS=200] [--large] [--storage DIR] [--gp]

`--large` adds three parameters of ten values (1.8 million combinations, 1.5 million valid:
above bayes_opt's candidate limit, so each of its rounds scores a sample). `--storage DIR`
records every round trip in an SQLite file in DIR, for both tools (ktune: a shared study,
each configuration claimed at ask and recorded at tell; Optuna: its RDB storage). `--gp`
adds the Gaussian-process samplers: ktune's `baco` and Optuna's `GPSampler` (which needs
PyTorch), beside `bayes_opt`.

Each tool runs OBSERVATIONS + 20 round trips on a cheap analytic objective; the figure is
the median time of the 20 round trips after the first OBSERVATIONS (the strategy's own
cost at that many observations, with nothing measured in between).
"""
import statistics
import sys
import time

import ktune
import optuna

PARAMS = {
    "block_x": [16, 32, 64, 128, 256],
    "block_y": [1, 2, 4, 8, 16],
    "tile": [1, 2, 3, 4, 6, 8],
    "unroll": [0, 1, 2, 4],
    "vector": [1, 2, 4],
}
RESTRICTIONS = ["block_x * block_y <= 1024", "block_x * tile <= 1024"]
if "--large" in sys.argv:
    PARAMS.update({f"p{i}": list(range(10)) for i in range(3)})
STORAGE = sys.argv[sys.argv.index("--storage") + 1] if "--storage" in sys.argv else None


def url(tool, strategy=""):
    if STORAGE is None:
        return None
    import os

    path = os.path.join(STORAGE, f"{tool}{strategy}.db")
    if os.path.exists(path):
        os.remove(path)
    return f"sqlite:///{os.path.abspath(path)}"


def f(c):
    return sum((c.get(f"p{i}", 3) - 3) ** 2 for i in range(3)) / 10 + (
        abs(c["block_x"] * c["block_y"] - 256) / 64
        + (c["tile"] - 4) ** 2
        + (c["unroll"] - 2) ** 2
        + 1.0 / c["vector"]
    )


def ktune_rounds(strategy, n):
    study = ktune.Study(PARAMS, RESTRICTIONS, strategy=strategy, seed=1, storage=url("ktune", strategy))
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        c = study.ask()
        study.tell(c, f(c))
        times.append(time.perf_counter() - t0)
    return times


def optuna_rounds(n, sampler=None):
    study = optuna.create_study(storage=url("optuna"), sampler=sampler)  # None: the default
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        trial = study.ask()
        c = {k: trial.suggest_categorical(k, v) for k, v in PARAMS.items()}
        if c["block_x"] * c["block_y"] > 1024 or c["block_x"] * c["tile"] > 1024:
            study.tell(trial, state=optuna.trial.TrialState.FAIL)
        else:
            study.tell(trial, f(c))
        times.append(time.perf_counter() - t0)
    return times


def main(observations):
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    n = observations + 20
    print(f"| tool | median round trip at {observations} observations (ms) | mean of all {n} (ms) |")
    print("|---|---:|---:|")
    for name, run in [
        ("ktune random", lambda: ktune_rounds("random", n)),
        ("ktune bayes_opt", lambda: ktune_rounds("bayes_opt", n)),
        (f"Optuna {optuna.__version__} {type(optuna.create_study().sampler).__name__} (default)", lambda: optuna_rounds(n)),
        ("ktune tpe", lambda: ktune_rounds("tpe", n)),
    ] + (
        [
            ("ktune baco", lambda: ktune_rounds("baco", n)),
            (f"Optuna {optuna.__version__} GPSampler", lambda: optuna_rounds(n, optuna.samplers.GPSampler(seed=1))),
        ]
        if "--gp" in sys.argv
        else []
    ):
        times = run()
        tail = times[observations:]
        print(f"| {name} | {statistics.median(tail) * 1e3:.3f} | {statistics.mean(times) * 1e3:.3f} |")


if __name__ == "__main__":
    numbers = [a for a in sys.argv[1:] if a.isdigit() and a != STORAGE]
    main(int(numbers[0]) if numbers else 200)
