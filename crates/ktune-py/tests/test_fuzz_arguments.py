"""The Python argument converters, fuzzed: arbitrary values (huge and negative ints, NaN,
strings with control characters, nested containers, bytes, None) in every argument of
``SearchSpace``, ``Study``, ``ask_batch``, ``tell``, ``enqueue``, ``sample``, indexing,
``simulate``, ``select`` and ``tune_kernel``.
Each call either works or raises an ordinary Python error that names something; never a
``PanicException`` (which ``except Exception`` does not catch) and never a crash.

Seeded, so a failure replays; ``KTUNE_FUZZ_CASES`` raises the number of cases."""

import json
import math
import os
import random

import pytest

import ktune

CASES = int(os.environ.get("KTUNE_FUZZ_CASES", "2000"))
EXPECTED = (ValueError, TypeError, IndexError, KeyError, OverflowError, ktune.KtuneError)


def arbitrary(rng, depth=0):
    kinds = [
        lambda: rng.choice([0, 1, -1, 2**63, -(2**63) - 1, 10**30, -(10**30), True, False]),
        lambda: rng.choice([0.5, -0.0, math.nan, math.inf, -math.inf, 1e308]),
        lambda: rng.choice(["", "x", "a\nb", "\x1b[2J", "é", "x" * 300, "1,2", "sqlite://"]),
        lambda: None,
        lambda: b"bytes",
        lambda: object(),
    ]
    if depth < 2:
        kinds.append(lambda: [arbitrary(rng, depth + 1) for _ in range(rng.randint(0, 3))])
        kinds.append(lambda: {arbitrary_key(rng): arbitrary(rng, depth + 1) for _ in range(rng.randint(0, 2))})
        kinds.append(lambda: tuple(arbitrary(rng, depth + 1) for _ in range(rng.randint(0, 2))))
    return rng.choice(kinds)()


def arbitrary_key(rng):
    return rng.choice(["x", "y", "", "\n", 3, None])


def survives(call):
    try:
        call()
    except EXPECTED as e:
        assert str(e), f"{type(e).__name__} with no message"
    except BaseException as e:  # noqa: BLE001 - the point: nothing else may escape
        if type(e).__name__ == "PanicException":
            raise AssertionError(f"ktune panicked: {e}") from None
        raise


def test_arbitrary_arguments_raise_ordinary_errors_or_work(tmp_path):
    rng = random.Random(49)
    base = {"x": [1, 2, 4, 8], "y": ["a", "b"]}
    for case in range(CASES):
        a = arbitrary(rng)
        which = case % 9
        if which == 0:
            survives(lambda: ktune.SearchSpace({"x": a}))
        elif which == 1:
            survives(lambda: ktune.SearchSpace(base, a))
        elif which == 2:
            key = rng.choice(["seed", "max_evals", "time_limit", "objective", "direction", "strategy",
                              "lease", "study_name", "device", "priors"])
            kw = {key: a}
            if key in ("study_name", "device", "lease"):
                kw["storage"] = f"sqlite:///{tmp_path}/fuzz.db"
            survives(lambda: ktune.Study(base, **kw))
        elif which == 3:
            survives(lambda: ktune.Study(base, strategy="random", seed=1).ask_batch(a))
        elif which == 4:
            study = ktune.Study(base, strategy="random", seed=1)
            survives(lambda: study.tell(a, 1.0))
            survives(lambda: study.tell({"x": 1, "y": "a"}, a))
        elif which == 5:
            study = ktune.Study(base, strategy="random", seed=1)
            survives(lambda: study.tell({"x": 2, "y": "b"}, 1.0, seconds=a))
            survives(lambda: study.enqueue(a))
        elif which == 6:
            survives(lambda: ktune.SearchSpace(base).sample(a))
            survives(lambda: ktune.SearchSpace(base).sample(2, seed=a))
        elif which == 7:
            survives(lambda: ktune.SearchSpace(base)[a])
        else:
            survives(lambda: ktune.Study(base, strategy="random", seed=1).optimize(lambda c: a, max_evals=2))


def test_arbitrary_simulate_and_tune_kernel_arguments_raise_ordinary_errors_or_work(tmp_path):
    cache = tmp_path / "k.json"
    params = {"bx": [32, 64, 128], "t": [1, 2]}
    cache.write_text(json.dumps({
        "kernel_name": "k", "tune_params_keys": ["bx", "t"], "tune_params": params,
        "cache": {f"{b},{t}": {"bx": b, "t": t, "time": 1.0 + b / 64 + t} for b in params["bx"] for t in params["t"]},
    }))
    rng = random.Random(4949)
    sim_args = ["strategy", "strategy_options", "seeds", "budget", "objective", "direction", "priors"]
    for case in range(CASES // 4):
        a = arbitrary(rng)
        key = sim_args[case % len(sim_args)]
        kw = {"seeds": 1, "budget": 3, key: a}
        survives(lambda: ktune.simulate(str(cache), **kw))
        survives(lambda: ktune.simulate(a))
        survives(lambda: ktune.select(str(cache), "NVIDIA A100", a))
        survives(lambda: ktune.select(a, "NVIDIA A100", [1]))
        survives(lambda: ktune.select(str(cache), a, [1]))
    if ktune.cuda_available():
        pytest.skip("a GPU is here: tune_kernel would launch kernels (fuzzed where none is)")
    np = pytest.importorskip("numpy")
    kernel_args = ["kernel_name", "kernel_source", "problem_size", "arguments", "tune_params",
                   "grid_div_x", "grid_div_y", "restrictions", "answer", "atol", "lang", "device",
                   "smem_args", "cmem_args", "compiler_options", "iterations", "block_size_names",
                   "strategy", "strategy_options", "cache", "metrics", "objective",
                   "objective_higher_is_better", "seed", "prior"]
    for case in range(CASES // 4):
        kw = {"kernel_name": "k", "kernel_source": "__global__ void k(int n) {}", "problem_size": 1024,
              "arguments": [np.int32(1024)], "tune_params": {"block_size_x": [32, 64]}, "quiet": True,
              kernel_args[case % len(kernel_args)]: arbitrary(rng)}
        survives(lambda: ktune.tune_kernel(**kw))
