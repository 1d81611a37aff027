"""``ktune.tune_kernel``: Kernel Tuner's arguments, checked before any GPU is touched; the
loop that shapes results, metrics and cache files; and, on a machine with an NVIDIA GPU, a
real kernel tuned end to end."""

import json
import os

import pytest

np = pytest.importorskip("numpy")

import ktune
from ktune import KtuneError, tune_kernel
from ktune import _kernel_tuner as kt

VECTOR_ADD = """
extern "C" __global__ void vector_add(float *c, float *a, float *b, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}
"""

SIZE = 100_000


def vector_add_args():
    a = np.random.default_rng(1).standard_normal(SIZE).astype(np.float32)
    b = np.random.default_rng(2).standard_normal(SIZE).astype(np.float32)
    c = np.zeros_like(b)
    return [c, a, b, np.int32(SIZE)], [a + b, None, None, None]


def call(**overrides):
    args, answer = vector_add_args()
    kw = dict(
        kernel_name="vector_add",
        kernel_source=VECTOR_ADD,
        problem_size=SIZE,
        arguments=args,
        tune_params={"block_size_x": [64, 128, 256, 512]},
        answer=answer,
        quiet=True,
    )
    kw.update(overrides)
    return tune_kernel(**kw)


def refused(match, exc=(KtuneError, ValueError), **overrides):
    with pytest.raises(exc, match=match):
        call(**overrides)


@pytest.mark.parametrize(
    "name, value",
    [
        ("texmem_args", {"tex": np.zeros(4, np.float32)}),
        ("defines", {"N": 4}),
        ("observers", [object()]),
        ("simulation_mode", True),
        ("parallel", True),
        ("compiler", "nvcc"),
        ("log", 10),
    ],
)
def test_unsupported_arguments_are_refused_by_name(name, value):
    refused(f"`{name}` is not supported", **{name: value})


def test_other_languages_and_custom_verification_are_refused():
    refused("lang='HIP' is not supported.*\"CUPY\" or \"NVCUDA\".*lang=\"OpenCL\"", lang="HIP")
    # Kernel Tuner's other CUDA backends are CUDA to ktune: past the language check.
    if not ktune.cuda_available():
        for lang in ("cupy", "NVCUDA", "CUDA"):
            refused("no CUDA driver", lang=lang)
    refused("custom `verify` function", verify=lambda answer, result, atol: True)
    refused("verify=True needs `answer`", verify=True, answer=None)
    refused("functions are not supported", restrictions=[lambda p: p["block_size_x"] > 64])
    refused("function as problem_size", problem_size=lambda p: (SIZE, 1))
    refused("function as grid_div_x", grid_div_x=lambda p: 1)
    refused("unbalanced brackets", kernel_name="vector_add<float<>")
    refused("empty name or template argument", kernel_name="vector_add<float,>")


def test_templated_kernel_names_become_template_arguments():
    params = {"block_size_x": [64, 128], "tile": [1, 2]}
    assert kt._template("vector_add", params) == ("vector_add", None)
    assert kt._template("matmul<float, tile>", params) == ("matmul", ["float", "{tile}"])
    assert kt._template(" k<Vec<float, 4>, (tile * 2), block_size_x> ", params) == (
        "k", ["Vec<float, 4>", "(tile * 2)", "{block_size_x}"])


def test_arguments_must_be_numpy_values_of_kernel_types():
    args, _ = vector_add_args()
    refused(r"arguments\[3\] is a Python int.*numpy.int32\(100000\)", arguments=args[:3] + [SIZE], answer=None)
    refused(r"arguments\[1\] is a list", arguments=[args[0], [1.0, 2.0], args[2], args[3]], answer=None)
    refused(r"arguments\[0\].*dtype `\|b1`", arguments=[args[0].astype(bool)] + args[1:], answer=None)
    refused(r"arguments\[0\].*dtype `>f4`", arguments=[args[0].astype(">f4")] + args[1:], answer=None)
    refused(r"arguments\[0\].*dtype `<c8`", arguments=[args[0].astype(np.complex64)] + args[1:], answer=None)


def test_mistaken_arguments_are_named_before_the_gpu_is_opened(tmp_path):
    # On a laptop without a GPU each of these used to pass until the GPU was opened.
    refused(r"compiler_options must be a list of strings \(e.g. \['-O3'\]\), not '-O3'", compiler_options="-O3")
    refused(r"block_size_names must be a list of strings", block_size_names="block_size_x")
    refused(r"block_size_names \['bx'\] names no parameter of tune_params", block_size_names=["bx"])
    refused(r"metrics\['gflops'\] is 3", metrics={"gflops": 3})
    refused(r"tune_params\[\"block_size_x\"\] must be a list of values, not '32'", exc=TypeError,
            tune_params={"block_size_x": "32"})
    refused(r"tune_params\[\"block_size_x\"\] must be a list of values", exc=TypeError,
            tune_params={"block_size_x": {"a": 1}})
    (tmp_path / "dir.json").mkdir()
    refused(r"is a directory", cache=str(tmp_path / "dir.json"))
    refused(r"does not exist", cache=str(tmp_path / "missing" / "c.json"))
    refused(r"grid_div_x holds '0'", grid_div_x=[0])
    refused(r"grid_div_y holds ''", grid_div_y=[""])


def test_answers_must_match_their_arguments():
    args, answer = vector_add_args()
    refused(r"answer has 2 entries but there are 4 arguments", answer=answer[:2])
    refused(r"answer\[0\] has dtype float64 but arguments\[0\] has float32", answer=[answer[0].astype(np.float64), None, None, None])
    refused(r"answer\[0\] has 99999 elements", answer=[answer[0][1:], None, None, None])
    refused(r"answer\[3\] is a int32", answer=[None, None, None, np.int32(3)])
    refused(r"answer has no array to compare", answer=[None] * 4)


def test_launch_rules_are_checked_against_the_parameters():
    # An unknown name is drawn with a caret under it, as in the CLI.
    with pytest.raises(ValueError) as e:
        call(problem_size=("n_x", 1))
    assert "problem_size" in str(e.value) and "unknown name `n_x`" in str(e.value) and "^^^" in str(e.value)
    with pytest.raises(ValueError, match=r"grid_div_x: unknown name `tile`"):
        call(grid_div_x=["block_size_x * tile"])
    with pytest.raises(ValueError, match="no configuration satisfies"):
        call(restrictions=["block_size_x > 4096"])
    refused("problem_size has 4 entries", problem_size=(1, 1, 1, 1))
    refused("iterations=0", iterations=0)
    refused("smem_args must be", smem_args={"bytes": 10})


def test_strategies_and_their_options_are_checked_before_the_gpu():
    refused("'basinhopping' is not available in ktune", strategy="basinhopping")
    refused("unknown strategy `nope`.*Kernel Tuner's names", strategy="nope")
    refused("strategy `genetic_algorithm`", strategy="genetic_algorithm", strategy_options={"no_such_option": 1})
    refused("max_fevals=0", strategy="random_sample", strategy_options={"max_fevals": 0})
    refused("objective 'GFLOP/s' is neither", objective="GFLOP/s")


def test_a_missing_source_file_is_named():
    refused("the file 'no_such_kernel.cu' does not exist", kernel_source="no_such_kernel.cu")


@pytest.mark.skipif(ktune.cuda_available(), reason="this machine has a CUDA driver")
def test_without_a_gpu_a_correct_call_says_what_is_missing(tmp_path):
    cache = tmp_path / "vector_add"
    with pytest.raises(KtuneError, match="no CUDA driver found"):
        call(cache=str(cache))
    # A templated name passes every check too.
    with pytest.raises(KtuneError, match="no CUDA driver found"):
        call(kernel_name="vector_add<float, block_size_x>")
    # Nothing was measured, so no cache file was begun.
    assert not os.path.exists(str(cache) + ".json")


class CpuKernel:
    """Evaluates configurations without a GPU for the loop's tests: `time` is a function of
    the block size, and block size 96 fails to compile. It follows the Kernel runner's contract
    (`jobs`, `stopped`, `evaluate`); the real runner is tested on the GPU below."""

    jobs = 2
    stopped = None

    def __init__(self):
        self.calls = []

    def evaluate(self, configs):
        out = []
        for c in configs:
            self.calls.append(dict(c))
            timings = {"compile_time": 5.0, "verification_time": 1.0, "benchmark_time": 2.0, "framework_time": 0.0}
            if c["block_size_x"] == 96:
                out.append({"status": "compile", "reason": "ptxas: too many registers", **timings})
            else:
                t = 1.0 + abs(c["block_size_x"] - 256) / 100 + c["unroll"] / 10
                out.append({"status": "ok", "reason": None, "time": t, "times": [t, t, t], **timings})
        return out


TUNE_PARAMS = {"block_size_x": [32, 64, 96, 128, 256, 512], "unroll": [1, 2, 4]}


def run_loop(kernel, *, strategy=None, options=None, metrics=None, objective="time", higher=False, cache=None, seed=0,
             objectives=None, with_study=False, goal=None):
    space = ktune.SearchSpace(TUNE_PARAMS)
    study, time_limit = kt._study(space, strategy, options, objective, higher, seed, None, objectives, goal)
    import time

    results = kt._tune(
        kernel,
        study,
        TUNE_PARAMS,
        time_limit=time_limit,
        objective=objective,
        metrics=metrics,
        cache=cache,
        quiet=True,
        verbose=False,
        started=time.perf_counter(),
        objectives=objectives,
    )
    return (results, study) if with_study else results


def test_several_objectives_are_told_and_give_the_front():
    # Time is least at block 256, unroll 1; "lanes" (maximised) grows with the block: they
    # conflict above 256, and unroll only adds time, so the front is unroll 1 from 256 up.
    metrics = {"lanes": "block_size_x * 1.0"}
    objectives = {"time": False, "lanes": True}
    results, study = run_loop(CpuKernel(), metrics=metrics, objective="time", objectives=objectives, with_study=True)
    assert len(results) == 18
    assert study.objectives == {"time": "minimize", "lanes": "maximize"}
    front = kt._front(results, study, TUNE_PARAMS)
    assert [(r["block_size_x"], r["unroll"]) for r in front] == [(256, 1), (512, 1)]
    told = {(r["config"]["block_size_x"], r["config"]["unroll"]): r for r in study.results}
    assert told[(512, 2)]["objectives"] == {"time": pytest.approx(3.76), "lanes": 512.0}
    # A metric that is not a finite number fails the configuration naming it.
    bad = {"lanes": lambda p: float("nan") if p["unroll"] == 4 else 1.0}
    results, study = run_loop(CpuKernel(), metrics=bad, objectives=objectives, with_study=True)
    failed = [r for r in study.results if r["config"]["unroll"] == 4 and r["config"]["block_size_x"] != 96]
    assert len(failed) == 5 and all(r["status"] == "runtime" and "lanes = nan" in r["reason"] for r in failed)


def test_a_goal_is_sought_and_picks_one_result():
    # As above: the front is unroll 1 from block 256 up; within 50% of the fastest time the
    # most lanes are the goal's pick.
    metrics = {"lanes": "block_size_x * 1.0"}
    objectives = {"time": False, "lanes": True}
    # Kernel Tuner's default strategy, brute force, measures everything: it does not seek the
    # goal, and says so.
    with pytest.warns(RuntimeWarning, match="strategy brute_force does not seek the goal"):
        results, study = run_loop(CpuKernel(), metrics=metrics, objectives=objectives, with_study=True,
                                  goal="lanes within 50% of time")
    assert study.goal == "lanes within 50% of time"
    picked = kt._picked(results, study, TUNE_PARAMS)
    fastest = min(r["time"] for r in results if "__error__" not in r)
    admitted = [r for r in results if "__error__" not in r and r["time"] <= 1.5 * fastest]
    assert picked["lanes"] == max(r["lanes"] for r in admitted)
    assert picked in admitted


def test_several_objectives_are_checked_before_the_gpu():
    refused("goal 'weighted time=1' picks among several objectives", goal="weighted time=1")
    refused("`joules` is not an objective", objectives={"time": False, "energy": False}, goal="joules within 5% of time")
    refused("give either objective", objective="time", objectives={"time": False, "x": True})
    refused("non-empty dict", objectives={})
    refused("True where higher is better", objectives={"time": "min"})
    refused("neither one of 'time', 'energy', 'power'", objectives={"time": False, "joules": False})
    # Energy is measured through NVML, which OpenCL devices do not have: refused before any
    # device is opened.
    refused("measured on CUDA GPUs", objectives={"time": False, "energy": False}, lang="OpenCL")
    refused("measured on CUDA GPUs", objective="power", lang="OpenCL")


def test_results_are_shaped_like_kernel_tuners():
    kernel = CpuKernel()
    metrics = {"GFLOP/s": "block_size_x / time", "double": lambda p: 2 * p["GFLOP/s"]}
    results = run_loop(kernel, metrics=metrics)
    # brute_force by default: every configuration once.
    assert len(results) == 18 and len(kernel.calls) == 18
    ok = [r for r in results if "__error__" not in r]
    failed = [r for r in results if "__error__" in r]
    assert len(failed) == 3
    for r in failed:
        assert r["block_size_x"] == 96
        assert isinstance(r["__error__"], kt.CompilationFailedConfig)
        assert str(r["__error__"]) == "CompilationFailedConfig"
        assert r["__error_reason__"] == "ptxas: too many registers"
        assert "time" not in r and "GFLOP/s" not in r
    for r in ok:
        assert set(r) >= {"block_size_x", "unroll", "time", "times", "GFLOP/s", "double", "compile_time",
                          "verification_time", "benchmark_time", "strategy_time", "framework_time", "timestamp"}
        assert r["GFLOP/s"] == pytest.approx(r["block_size_x"] / r["time"])
        assert r["double"] == pytest.approx(2 * r["GFLOP/s"])
    best = kt._best(results, "time", False)
    assert (best["block_size_x"], best["unroll"]) == (256, 1)


def test_a_metric_can_be_the_objective_and_is_maximised():
    kernel = CpuKernel()
    results = run_loop(
        kernel, metrics={"GFLOP/s": "block_size_x / time"}, objective="GFLOP/s", higher=True,
        strategy="random_sample", options={"max_fevals": 6},
    )
    assert len(results) == 6 and len(kernel.calls) == 6
    best = kt._best(results, "GFLOP/s", True)
    assert best["GFLOP/s"] == max(r["GFLOP/s"] for r in results if "__error__" not in r)


def test_kernel_tuner_strategy_names_and_fraction():
    kernel = CpuKernel()
    # random_sample's fraction of the space is its budget (ceil(0.5 * 18) = 9).
    results = run_loop(kernel, strategy="random_sample", options={"fraction": 0.5})
    assert len(results) == 9
    keys = [(r["block_size_x"], r["unroll"]) for r in results]
    assert len(set(keys)) == 9
    # Same seed, same configurations.
    again = run_loop(CpuKernel(), strategy="random_sample", options={"fraction": 0.5})
    assert [(r["block_size_x"], r["unroll"]) for r in again] == keys


def test_the_cache_file_is_kernel_tuners_and_resumes(tmp_path):
    path = tmp_path / "kernel.json"
    cache = kt._Cache(str(path), "vector_add", [SIZE], TUNE_PARAMS, "time")
    cache.open("CPU stand-in")
    first = run_loop(CpuKernel(), strategy="random_sample", options={"max_fevals": 10}, cache=cache)
    assert len(first) == 10
    data = json.loads(path.read_text())  # closed: plain JSON
    assert data["kernel_name"] == "vector_add" and data["device_name"] == "CPU stand-in"
    assert data["tune_params_keys"] == ["block_size_x", "unroll"]
    assert len(data["cache"]) == 10
    failed = [e for e in data["cache"].values() if "__error__" in e]
    assert all(e["__error__"] == "CompilationFailedConfig" for e in failed)

    # A second run with the same cache measures only what the cache lacks.
    kernel = CpuKernel()
    cache = kt._Cache(str(path), "vector_add", [SIZE], TUNE_PARAMS, "time")
    cache.open("CPU stand-in")
    second = run_loop(kernel, cache=cache)
    assert len(second) == 18
    assert len(kernel.calls) == 8
    cached = {(r["block_size_x"], r["unroll"]) for r in first}
    assert not cached & {(c["block_size_x"], c["unroll"]) for c in kernel.calls}
    assert len(json.loads(path.read_text())["cache"]) == 18

    # ktune's simulation reads the file (a brute-forced space now) and finds its optimum.
    sim = ktune.simulate(str(path), "random", seeds=1)
    assert sim["configurations"] == 18 and sim["valid"] == 15
    assert sim["optimum"] == pytest.approx(1.1)


def test_an_interrupted_cache_file_is_resumed(tmp_path):
    path = tmp_path / "cut.json"
    cache = kt._Cache(str(path), "k", [SIZE], TUNE_PARAMS, "time")
    cache.open("dev")
    run_loop(CpuKernel(), strategy="random_sample", options={"max_fevals": 4}, cache=cache)
    # As if the process had died before closing it: the last entry ends with a comma.
    text = path.read_text()
    path.write_text(text[: -len("}\n}")] + ",")
    cache = kt._Cache(str(path), "k", [SIZE], TUNE_PARAMS, "time")
    assert len(cache.entries) == 4
    cache.open("dev")
    kernel = CpuKernel()
    run_loop(kernel, cache=cache)
    assert len(kernel.calls) == 14
    assert len(json.loads(path.read_text())["cache"]) == 18


class StoppingKernel(CpuKernel):
    """Stops for good after its first batch, as the CUDA runner does when the GPU is lost or
    when the outputs all differ from the answer; `stopped` is the runner's whole message."""

    def evaluate(self, configs):
        if self.calls:
            raise AssertionError("evaluated after it stopped")
        out = super().evaluate(configs)
        self.stopped = "the first 8 configurations that ran all gave outputs different from the expected output"
        return out


def test_a_runner_that_stops_ends_the_run_with_its_message_and_keeps_what_it_measured(tmp_path):
    path = tmp_path / "c.json"
    cache = kt._Cache(str(path), "k", [SIZE], TUNE_PARAMS, "time")
    cache.open("dev")
    kernel = StoppingKernel()
    with pytest.raises(KtuneError, match=r"^tune_kernel: the first 8 configurations that ran all gave outputs"):
        run_loop(kernel, cache=cache)
    assert len(kernel.calls) == kernel.jobs
    assert len(json.loads(path.read_text())["cache"]) == kernel.jobs


def test_a_cache_of_another_kernel_parameters_or_device_is_refused(tmp_path):
    path = tmp_path / "c.json"
    cache = kt._Cache(str(path), "k", [SIZE], TUNE_PARAMS, "time")
    cache.open("dev A")
    run_loop(CpuKernel(), strategy="random_sample", options={"max_fevals": 2}, cache=cache)
    with pytest.raises(KtuneError, match="results of kernel 'k', not 'other'"):
        kt._Cache(str(path), "other", [SIZE], TUNE_PARAMS, "time")
    with pytest.raises(KtuneError, match="for the parameters"):
        kt._Cache(str(path), "k", [SIZE], {"unroll": [1], "block_size_x": [32]}, "time")
    with pytest.raises(KtuneError, match="problem size"):
        kt._Cache(str(path), "k", [SIZE + 1], TUNE_PARAMS, "time")
    c = kt._Cache(str(path), "k", [SIZE], TUNE_PARAMS, "time")
    with pytest.raises(KtuneError, match="measured on 'dev A'"):
        c.open("dev B")
    path.write_text("{ not json")
    with pytest.raises(KtuneError, match="not a Kernel Tuner cache file"):
        kt._Cache(str(path), "k", [SIZE], TUNE_PARAMS, "time")


gpu = pytest.mark.skipif(not ktune.cuda_available(), reason="no CUDA driver on this machine (libcuda.so)")


@gpu
def test_vector_add_on_the_gpu(tmp_path):
    cache = tmp_path / "vector_add"
    results, env = call(cache=str(cache), metrics={"GB/s": f"3 * 4 * {SIZE} / (time / 1e3) / 1e9"})
    assert len(results) == 4
    assert all("__error__" not in r for r in results), results
    assert all(r["time"] > 0 and len(r["times"]) == 7 for r in results)
    assert env["device_name"] and env["iterations"] == 7
    assert env["best_config"]["time"] == min(r["time"] for r in results)
    # Resumed from the cache: nothing is measured again.
    again, _ = call(cache=str(cache))
    assert [r["time"] for r in again] == [r["time"] for r in results]
    assert all(r["compile_time"] == 0 and r["benchmark_time"] == 0 for r in again)


@gpu
def test_time_and_energy_are_tuned_together_on_the_gpu(tmp_path):
    # Kernel Tuner 1.5's spelling; energy and power come from NVML with every result.
    cache = tmp_path / "energy"
    results, env = call(objectives={"time": False, "energy": False}, cache=str(cache))
    assert len(results) == 4 and all("__error__" not in r for r in results), results
    for r in results:
        assert r["energy"] > 0 and r["power"] > 0, r
        # Joules per launch are watts times seconds per launch, within the power window's
        # measurement.
        assert r["energy"] == pytest.approx(r["power"] * r["time"] / 1e3, rel=0.5), r
    assert env["objectives"] == {"time": False, "energy": False}
    front = env["pareto_front"]
    assert front and env["best_config"]["time"] == min(r["time"] for r in results)
    # No result on the front is beaten on both by another result.
    for f in front:
        assert not any(r["time"] < f["time"] and r["energy"] < f["energy"] for r in results), f
    # The cache keeps the energy: resumed, nothing is measured again.
    again, _ = call(objectives={"time": False, "energy": False}, cache=str(cache))
    assert [r["energy"] for r in again] == [r["energy"] for r in results]


@gpu
def test_wrong_output_is_a_failed_configuration_on_the_gpu():
    args, answer = vector_add_args()
    answer[0] = answer[0] + 1.0
    results, env = call(answer=answer)
    assert len(results) == 4
    assert all(isinstance(r["__error__"], kt.RuntimeFailedConfig) for r in results)
    assert "best_config" not in env


@gpu
def test_outputs_that_all_differ_from_the_answer_stop_the_run_on_the_gpu(tmp_path):
    # A wrong answer (here: another seed's data) makes every configuration fail; after the
    # first 8 that ran, the run stops with the answer named instead of spending its budget.
    args, answer = vector_add_args()
    answer[0] = answer[0] + 1.0
    cache = tmp_path / "kt.json"
    with pytest.raises(KtuneError, match=r"the first 8 configurations that ran all gave outputs different from the expected output \(the first: output `arguments\[0\]`"):
        call(answer=answer, tune_params={"block_size_x": [32 * i for i in range(1, 33)]}, cache=str(cache))
    # What was measured before the stop is in the cache (in batches: at least the 8).
    assert 8 <= len(json.loads(cache.read_text())["cache"]) < 32


@gpu
def test_arguments_that_do_not_fit_the_kernel_are_named_on_the_gpu():
    # The driver launches with whatever it is given; ktune compares the arguments with the
    # kernel's parameters first (drivers of CUDA 12.4 and later) and names the mismatch.
    args, answer = vector_add_args()
    refused(r"the kernel takes 4 parameters but 3 arguments are given", arguments=args[:3], answer=None)
    refused(
        r"argument 3 \(`arguments\[3\]`, an int64 scalar\) passes 8 bytes, but the kernel's parameter 3 takes 4",
        arguments=args[:3] + [np.int64(SIZE)],
        answer=answer,
    )


EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples", "python")


def run_example(name):
    import subprocess
    import sys

    return subprocess.run([sys.executable, os.path.join(EXAMPLES, name)], capture_output=True, text=True, timeout=600)


@pytest.mark.skipif(ktune.cuda_available(), reason="this machine has a CUDA driver")
def test_the_cuda_examples_skip_with_a_reason_without_a_gpu():
    for name in ("vector_add.py", "matmul.py"):
        p = run_example(name)
        assert p.returncode == 0, p.stderr
        assert "skipped: no CUDA driver" in p.stdout


@pytest.mark.skipif(ktune.cuda_available(), reason="this machine has a CUDA driver")
def test_the_matmul_scripts_arguments_pass_every_check_before_the_gpu():
    import importlib.util

    spec = importlib.util.spec_from_file_location("matmul_example", os.path.join(EXAMPLES, "matmul.py"))
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    # Everything up to opening the device is accepted: the only complaint is the missing GPU.
    with pytest.raises(KtuneError, match="no CUDA driver found"):
        m.kernel_tuner.tune_kernel(
            "matmul", m.kernel_string, m.problem_size, m.args, m.tune_params,
            grid_div_y=m.grid_div_y, grid_div_x=m.grid_div_x, restrictions=m.restrict,
            answer=[m.A @ m.B, None, None], atol=5e-3, metrics=m.metrics, quiet=True,
            compiler_options=["-DWIDTH=512"])


@gpu
def test_the_cuda_examples_run_on_the_gpu():
    for name in ("vector_add.py", "matmul.py"):
        p = run_example(name)
        assert p.returncode == 0, p.stdout + p.stderr
        assert "configurations measured on" in p.stdout
    # Every matmul configuration that ran computed the right product.
    assert "BEST PERFORMING CONFIGURATION" in p.stdout
