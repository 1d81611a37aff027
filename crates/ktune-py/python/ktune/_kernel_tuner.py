"""``ktune.tune_kernel``: Kernel Tuner's ``tune_kernel`` on ktune's CUDA runner and strategies.

The arguments are Kernel Tuner 1.5's, with the same meaning, so a script written for Kernel
Tuner runs by changing its import. What ktune does not support is refused by name, before
anything runs; everything is checked before a GPU is touched, so mistakes are reported on a
machine without one too.

The tuning loop here is thin: ktune's strategy proposes (``Study``), the compiled CUDA runner
measures a batch at a time (compiling the next configurations while one runs), and this module
shapes the results, metrics, cache file and environment the way Kernel Tuner does.
"""

import builtins
import json
import math
import os
import pathlib
import sys
import time
from datetime import datetime, timezone

from ktune import _ktune

__all__ = [
    "tune_kernel",
    "ErrorConfig",
    "InvalidConfig",
    "CompilationFailedConfig",
    "RuntimeFailedConfig",
]


class ErrorConfig(str):
    """Marks a configuration that could not be measured (Kernel Tuner's class of the same
    name): the value of ``"__error__"`` in its result."""

    def __new__(cls):
        return super().__new__(cls, cls.__name__)

    def __repr__(self):
        return self.__class__.__name__


class InvalidConfig(ErrorConfig):
    """The configuration cannot be launched (block or grid outside the device's limits)."""


class CompilationFailedConfig(ErrorConfig):
    """The configuration did not compile."""


class RuntimeFailedConfig(ErrorConfig):
    """The launch failed, timed out, or the output differed from ``answer``."""


_ERROR_OF_FAILURE = {
    "compile": CompilationFailedConfig,
    "invalid": InvalidConfig,
    "runtime": RuntimeFailedConfig,
    "timeout": RuntimeFailedConfig,
    "wrong_output": RuntimeFailedConfig,
}
_FAILURE_OF_ERROR = {
    "CompilationFailedConfig": "compile",
    "InvalidConfig": "invalid",
    "RuntimeFailedConfig": "runtime",
    "ErrorConfig": "runtime",
}

# Kernel Tuner's strategy names and ktune's strategy for each; ktune's own names are
# accepted too.
_STRATEGIES = {
    "brute_force": "brute_force",
    "random_sample": "random",
    "diff_evo": "differential_evolution",
    "genetic_algorithm": "genetic_algorithm",
    "greedy_ils": "greedy_ils",
    "mls": "mls",
    "pso": "pso",
    "simulated_annealing": "simulated_annealing",
    "firefly_algorithm": "firefly",
    "bayes_opt": "bayes_opt",
}
_KTUNE_STRATEGIES = {
    "auto",
    "random",
    "differential_evolution",
    "firefly",
    "baco",
    "tpe",
}
_UNSUPPORTED_STRATEGIES = {"minimize", "basinhopping", "dual_annealing", "greedy_mls", "ordered_greedy_mls"}

_LANGUAGES = {"CUDA", "NVCUDA", "CUPY", "OPENCL"}
_SOURCE_SUFFIXES = (".cu", ".cuh", ".c", ".cpp", ".h", ".hpp", ".cl")


def _fail(message):
    raise _ktune.KtuneError("tune_kernel: " + message)


def _refuse_unsupported(given):
    """Arguments of Kernel Tuner that ktune does not implement: refused by name when set."""
    reasons = {
        "texmem_args": "texture memory arguments are not supported; pass the array as a kernel argument",
        "defines": "custom preprocessor defines are not supported; the tunable parameters are defined as in Kernel Tuner's default",
        "observers": "observers are not supported; ktune measures time (and power with `ktune tune`, objective = \"energy\")",
        "simulation_mode": "use ktune.simulate(cache_file, strategy) to replay a cache file",
        "parallel": "parallel tuning is done with a shared storage: run `ktune tune --storage` once per GPU",
        "compiler": "ktune compiles CUDA with NVRTC and OpenCL with the OpenCL driver; give their flags in compiler_options",
        "log": "logging to a file is not supported; results are returned and, with cache=, stored",
    }
    for name, why in reasons.items():
        if given.get(name) not in (None, False):
            _fail(f"`{name}` is not supported by ktune: {why}")
    lang = given.get("lang")
    if lang is not None and str(lang).upper() not in _LANGUAGES:
        _fail(
            f"lang={lang!r} is not supported: ktune tunes CUDA kernels (lang None, \"CUDA\", \"CUPY\" or \"NVCUDA\") "
            "and OpenCL kernels (lang=\"OpenCL\")"
        )
    verify = given.get("verify")
    if callable(verify):
        _fail(
            "a custom `verify` function is not supported: outputs are compared with `answer` "
            "element by element (|output - answer| <= atol)"
        )
    if verify not in (None, False, True):
        _fail(f"verify={verify!r}: give True, False or None")
    if verify is True and given.get("answer") is None:
        _fail("verify=True needs `answer`, the expected outputs")


def _kernel_source(kernel_source, kernel_name):
    """The source text and the name compiler messages give it."""
    if callable(kernel_source):
        _fail("a code-generating function as kernel_source is not supported; give the code or a file name")
    if isinstance(kernel_source, (list, tuple)):
        if len(kernel_source) != 1:
            _fail("a list of source files is not supported; #include the others from the kernel's file")
        kernel_source = kernel_source[0]
    if isinstance(kernel_source, pathlib.PurePath):
        path = pathlib.Path(kernel_source)
        if not path.is_file():
            _fail(f"kernel_source: the file {str(path)!r} does not exist")
        return path.read_text(), str(path)
    if not isinstance(kernel_source, str):
        _fail(f"kernel_source must be CUDA code or a file name, not {type(kernel_source).__name__}")
    one_line = "\n" not in kernel_source
    if one_line and os.path.isfile(kernel_source):
        return pathlib.Path(kernel_source).read_text(), kernel_source
    if one_line and kernel_source.strip().endswith(_SOURCE_SUFFIXES) and len(kernel_source) < 512:
        _fail(f"kernel_source: the file {kernel_source!r} does not exist")
    return kernel_source, f"{kernel_name}.cu"


def _template(kernel_name, tune_params):
    """A templated kernel's name and its template arguments: `"matmul<float, tile>"` is
    `matmul` with `float` and the value of the parameter `tile`."""
    if not isinstance(kernel_name, str) or not kernel_name.strip():
        _fail(f"kernel_name must be the kernel's name, not {kernel_name!r}")
    name = kernel_name.strip()
    if "<" not in name:
        return name, None
    if not name.endswith(">"):
        _fail(f"kernel_name {kernel_name!r}: a templated name ends with '>'")
    base, inner = name[: name.index("<")].strip(), name[name.index("<") + 1 : -1]
    args, depth, current = [], 0, ""
    for ch in inner:
        if ch in "<([":
            depth += 1
        elif ch in ">)]":
            depth -= 1
        if ch == "," and depth == 0:
            args.append(current.strip())
            current = ""
        else:
            current += ch
    if depth != 0:
        _fail(f"kernel_name {kernel_name!r}: unbalanced brackets in the template arguments")
    args.append(current.strip())
    if not base or any(not a for a in args):
        _fail(f"kernel_name {kernel_name!r}: an empty name or template argument")
    # A parameter's name stands for its value (it is a preprocessor define too).
    return base, [("{" + a + "}") if a in tune_params else a for a in args]


def _problem_size(problem_size):
    if callable(problem_size):
        _fail("a function as problem_size is not supported; give ints or parameter expressions (strings)")
    if isinstance(problem_size, (str, int)) or _is_numpy_integer(problem_size):
        problem_size = (problem_size,)
    try:
        entries = list(problem_size)
    except TypeError:
        _fail(f"problem_size must be an int or a tuple of up to three, not {problem_size!r}")
    out = []
    for i, p in enumerate(entries):
        if callable(p):
            _fail(f"problem_size[{i}] is a function; give an int or a parameter expression (a string)")
        if isinstance(p, bool):
            _fail(f"problem_size[{i}] is a bool")
        out.append(p if isinstance(p, str) else int(p))
    return out


def _is_numpy_integer(x):
    numpy = sys.modules.get("numpy")
    return numpy is not None and isinstance(x, numpy.integer)


def _numpy():
    try:
        import numpy
    except ImportError as e:
        raise ImportError("tune_kernel takes its arguments as NumPy arrays: pip install numpy") from e
    return numpy


def _argument(np, what, arg):
    """(name, dtype descr, bytes, is_array) of a kernel argument."""
    if isinstance(arg, np.ndarray):
        a = np.ascontiguousarray(arg)
        return (what, a.dtype.str, a.tobytes(), True)
    if isinstance(arg, np.generic):
        return (what, arg.dtype.str, arg.tobytes(), False)
    if isinstance(arg, (bool, int, float)):
        kind = "numpy.int32" if isinstance(arg, int) else "numpy.float32"
        _fail(
            f"{what} is a Python {type(arg).__name__}, whose C type is ambiguous: give a NumPy scalar of "
            f"the kernel parameter's type, e.g. {kind}({arg!r})"
        )
    _fail(f"{what} is a {type(arg).__name__}; kernel arguments are NumPy arrays or NumPy scalars")


def _answers(np, answer, arguments):
    if answer is None:
        return None
    if len(answer) != len(arguments):
        _fail(
            f"answer has {len(answer)} entries but there are {len(arguments)} arguments; "
            "give one per argument (None where nothing is checked)"
        )
    out = []
    for i, (a, arg) in enumerate(zip(answer, arguments)):
        if a is None:
            out.append(None)
            continue
        if not isinstance(a, np.ndarray):
            _fail(f"answer[{i}] is a {type(a).__name__}; give a NumPy array or None")
        if not isinstance(arg, np.ndarray):
            _fail(f"answer[{i}] is given, but arguments[{i}] is a scalar, which a kernel cannot change; give None there")
        if a.dtype != arg.dtype:
            _fail(f"answer[{i}] has dtype {a.dtype} but arguments[{i}] has {arg.dtype}; they must match")
        if a.size != arg.size:
            _fail(f"answer[{i}] has {a.size} elements but arguments[{i}] has {arg.size}; they must match")
        out.append(np.ascontiguousarray(a).tobytes())
    if all(a is None for a in out):
        _fail("answer has no array to compare; give the expected output where the kernel writes one")
    return out


def _expressions(what, divisors):
    if divisors is None:
        return None
    if callable(divisors):
        _fail(f"a function as {what} is not supported; give a list of parameter expressions (strings)")
    if isinstance(divisors, str):
        divisors = [divisors]
    out = [str(d).strip() for d in divisors]
    # A divisor that is 0 whatever the parameters would divide the problem size by zero.
    for d in out:
        try:
            zero = float(d) == 0
        except ValueError:
            zero = False
        if zero or not d:
            _fail(f"{what} holds {d!r}: a grid divisor must be a parameter expression that is never 0")
    return out


def _string_list(what, value, example):
    """A list of strings; a lone string is refused (iterated, it would be its characters)."""
    if value is None:
        return None
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        _fail(f"{what} must be a list of strings (e.g. {example}), not {value!r}")
    bad = [v for v in value if not isinstance(v, str)]
    if bad:
        _fail(f"{what} must be a list of strings; {bad[0]!r} is not one")
    return list(value)


def _check_cache_path(cache):
    """The cache is written as results come in: a path that cannot be written is refused
    before the GPU is opened, not after the first measurement."""
    if not cache:
        return
    path = str(cache)
    if not path.endswith(".json"):
        path += ".json"
    if os.path.isdir(path):
        _fail(f"cache={cache!r} is a directory; give a file name (e.g. {os.path.join(path, 'cache.json')!r})")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        _fail(f"cache={cache!r}: the folder {folder!r} does not exist")
    if os.path.exists(path) and not os.access(path, os.W_OK):
        _fail(f"cache={cache!r} cannot be written (check its permissions)")
    if not os.path.exists(path) and not os.access(folder, os.W_OK):
        _fail(f"cache={cache!r}: the folder {folder!r} cannot be written")


def _restrictions(restrictions):
    if restrictions is None:
        return None
    if isinstance(restrictions, str):
        restrictions = [restrictions]
    if callable(restrictions) or any(callable(r) for r in restrictions):
        _fail(
            "restrictions given as functions are not supported: write them as expressions, "
            "e.g. \"block_size_x * block_size_y <= 1024\""
        )
    return list(restrictions)


def _shared_memory(smem_args):
    if smem_args is None:
        return None
    if not isinstance(smem_args, dict) or set(smem_args) != {"size"}:
        _fail("smem_args must be {\"size\": bytes}, bytes an int or an expression of the parameters")
    size = smem_args["size"]
    if callable(size):
        _fail("smem_args[\"size\"] as a function is not supported; give an int or an expression (a string)")
    return str(size)


def _constants(np, cmem_args):
    if cmem_args is None:
        return None
    if not isinstance(cmem_args, dict):
        _fail(f"cmem_args must be a dict of names to NumPy arrays, not {type(cmem_args).__name__}")
    out = []
    for name, value in cmem_args.items():
        if not isinstance(value, (np.ndarray, np.generic)):
            _fail(f"cmem_args[{name!r}] is a {type(value).__name__}; give a NumPy array")
        a = np.ascontiguousarray(value)
        out.append((str(name), a.dtype.str, a.tobytes()))
    return out


def _strategy(strategy, strategy_options, space_size):
    """ktune's strategy name, its options, and the budget (evaluations, seconds)."""
    options = dict(strategy_options or {})
    max_fevals = options.pop("max_fevals", None)
    time_limit = options.pop("time_limit", None)
    options.pop("searchspace_construction_options", None)
    name = strategy or "brute_force"
    if not isinstance(name, str):
        _fail("a user-defined strategy object is not supported; give a strategy's name")
    if name in _UNSUPPORTED_STRATEGIES:
        _fail(
            f"strategy {name!r} is not available in ktune; use one of "
            + ", ".join(sorted(set(_STRATEGIES) | _KTUNE_STRATEGIES))
        )
    name = _STRATEGIES.get(name, name)
    if name == "random" and "fraction" in options:
        fraction = options.pop("fraction")
        if not 0 < fraction <= 1:
            _fail(f"strategy_options fraction={fraction!r}: give a fraction of the search space in (0, 1]")
        max_fevals = max(1, math.ceil(fraction * space_size))
    if max_fevals is not None:
        if int(max_fevals) < 1:
            _fail(f"strategy_options max_fevals={max_fevals!r}: give at least 1")
        max_fevals = min(int(max_fevals), space_size)
    else:
        max_fevals = space_size
    if time_limit is not None and not time_limit > 0:
        _fail(f"strategy_options time_limit={time_limit!r}: give seconds above 0")
    return name, options, max_fevals, time_limit


def _metric_values(metrics, params):
    """Kernel Tuner's metrics: each a string expression of the parameters, the measured
    values and earlier metrics, or a function of that dict."""
    for name, how in metrics.items():
        if isinstance(how, str):
            try:
                value = eval(how, {"__builtins__": builtins}, dict(params))
            except Exception as e:
                _fail(f"metric {name!r} = {how!r} could not be evaluated: {type(e).__name__}: {e}")
        elif callable(how):
            value = how(params)
        else:
            _fail(f"metric {name!r} must be an expression (a string) or a function of the result dict")
        params[name] = value
    return params


def _key(config):
    return ",".join(str(v) for v in config.values())


class _Cache:
    """A Kernel Tuner cache file: a JSON header, then one entry per line appended as it is
    measured (so an interrupted run keeps what it measured), closed at the end."""

    def __init__(self, path, kernel_name, problem_size, tune_params, objective):
        path = str(path)
        if not path.endswith(".json"):
            path += ".json"
        self.path = path
        self.entries = {}
        self.header = {
            "kernel_name": kernel_name,
            "problem_size": problem_size,
            "tune_params_keys": list(tune_params.keys()),
            "tune_params": {k: list(v) for k, v in tune_params.items()},
            "objective": objective,
        }
        if os.path.isfile(path):
            self._read()

    def _read(self):
        with open(self.path) as f:
            text = f.read().strip()
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            # Left open by a run that was cut off: entries end with commas, braces missing.
            try:
                data = json.loads(text.rstrip(",") + "}\n}")
            except json.JSONDecodeError as e:
                _fail(f"cache file {self.path!r} is not a Kernel Tuner cache file: {e}")
        for key in ("kernel_name", "tune_params_keys"):
            if key not in data:
                _fail(f"cache file {self.path!r} has no {key!r}: it is not a Kernel Tuner cache file")
        if data["kernel_name"] != self.header["kernel_name"]:
            _fail(
                f"cache file {self.path!r} holds results of kernel {data['kernel_name']!r}, "
                f"not {self.header['kernel_name']!r}"
            )
        if data["tune_params_keys"] != self.header["tune_params_keys"]:
            _fail(
                f"cache file {self.path!r} holds results for the parameters {data['tune_params_keys']}, "
                f"not {self.header['tune_params_keys']}"
            )
        size = data.get("problem_size")
        if size is not None and list(_as_list(size)) != list(_as_list(self.header["problem_size"])):
            _fail(f"cache file {self.path!r} holds results for problem size {size}, not {self.header['problem_size']}")
        self.device_name = data.get("device_name")
        self.entries = data.get("cache", {})
        for entry in self.entries.values():
            error = entry.get("__error__")
            if error is None:
                error = next((v for v in entry.values() if isinstance(v, str) and v in _FAILURE_OF_ERROR), None)
            if error is not None:
                entry["__error__"] = _error_class(error)()

    def open(self, device_name):
        """Checks the device and readies the file for appending."""
        if os.path.isfile(self.path) and self.entries:
            if self.device_name not in (None, device_name):
                _fail(
                    f"cache file {self.path!r} holds results measured on {self.device_name!r}, "
                    f"not on this {device_name!r}; give another cache file"
                )
            device_name = self.device_name
        header = dict(device_name=device_name, **self.header, cache={})
        # Written afresh (whatever layout the file had): the header without the closing
        # "}\n}", then one entry per line, each followed by a comma, so that entries can
        # be appended and a file cut off at any line is still read.
        text = json.dumps(header, indent="", default=_json_default)[:-3]
        text += "".join("\n" + _entry_line(k, e) + "," for k, e in self.entries.items())
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, self.path)

    def store(self, key, result):
        self.entries[key] = result
        with open(self.path, "a") as f:
            f.write("\n" + _entry_line(key, result) + ",")

    def close(self):
        if not os.path.isfile(self.path):
            return
        with open(self.path) as f:
            text = f.read()
        if text.endswith(","):
            text = text[:-1] + "}\n}"
        elif text.rstrip().endswith("{"):
            text = text.rstrip() + "}\n}"
        else:
            return
        with open(self.path, "w") as f:
            f.write(text)


def _entry_line(key, result):
    entry = {k: (str(v) if isinstance(v, ErrorConfig) else v) for k, v in result.items()}
    return json.dumps({key: entry}, default=_json_default)[1:-1]


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _error_class(name):
    return {c.__name__: c for c in (ErrorConfig, InvalidConfig, CompilationFailedConfig, RuntimeFailedConfig)}.get(
        str(name), RuntimeFailedConfig
    )


def _json_default(o):
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        if isinstance(o, numpy.integer):
            return int(o)
        if isinstance(o, numpy.floating):
            return float(o)
        if isinstance(o, numpy.ndarray):
            return o.tolist()
    raise TypeError(f"{type(o).__name__} is not JSON serialisable")


def _print_result(params, tune_params, objective, metrics):
    keys = list(tune_params) + [objective] + [m for m in (metrics or {}) if m != objective]
    parts = []
    for k in keys:
        if k not in params:
            continue
        v = params[k]
        if isinstance(v, float):
            unit = "ms" if k == "time" else ""
            parts.append(f"{k}={v:.3f}{unit}")
        else:
            parts.append(f"{k}={v}")
    if "__error__" in params:
        parts.append(str(params["__error__"]))
    print(", ".join(parts))


# What tune_kernel measures itself, as objectives can name it: the kernel time (ms), and on
# CUDA GPUs the energy per launch (J) and power (W) from NVML.
_MEASURED = ("time", "energy", "power")


def _study(space, strategy, strategy_options, objective, higher_is_better, seed, prior=None, objectives=None,
           goal=None):
    """The ask/tell study of a run (its strategy checked, told the priors) and its time limit;
    with ``objectives`` (Kernel Tuner 1.5's dict of names to higher-is-better) a study of
    several, seeking ``goal`` when given."""
    name, options, max_fevals, time_limit = _strategy(strategy, strategy_options, space.size)
    several = {} if objectives is None or len(objectives) < 2 else {"objectives": dict(objectives)}
    if goal is not None:
        if not several:
            _fail(f"goal {goal!r} picks among several objectives: give objectives= too, e.g. {{\"time\": False, \"energy\": False}}")
        several["goal"] = goal
    if not several:
        several = {
            "objective": objective,
            "direction": "maximize" if higher_is_better else "minimize",
        }
    try:
        study = _ktune.Study(
            space,
            strategy=name,
            strategy_options=options,
            max_evals=max_fevals,
            seed=0 if seed is None else int(seed),
            priors=prior,
            **several,
        )
    except ValueError as e:
        if (prior is not None and str(e).startswith("prior ")) or str(e).startswith("goal "):
            _fail(str(e))
        _fail(f"{e} (Kernel Tuner's names are accepted too: {', '.join(sorted(_STRATEGIES))})")
    return study, time_limit


def _tune(evaluator, study, tune_params, *, time_limit, objective, metrics, cache, quiet, verbose, started, objectives=None):
    """The loop: ask the strategy for a batch, take what the cache holds, measure the rest
    with ``evaluator`` (``evaluate(configs) -> list of dicts``, ``jobs``, ``stopped``), and
    shape each result the way Kernel Tuner does."""
    results = []
    strategy_seconds = 0.0
    measured_seconds = 0.0
    try:
        while True:
            if time_limit is not None and time.perf_counter() - started >= time_limit:
                break
            t = time.perf_counter()
            batch = study.ask_batch(max(1, evaluator.jobs))
            strategy_seconds += time.perf_counter() - t
            if not batch:
                break
            fresh = [c for c in batch if cache is None or _key(c) not in cache.entries]
            measured = {}
            if fresh:
                t = time.perf_counter()
                outs = evaluator.evaluate(fresh)
                measured_seconds += time.perf_counter() - t
                for c, out in zip(fresh, outs):
                    measured[_key(c)] = out
            for config in batch:
                key = _key(config)
                if key in measured:
                    params = _result(config, measured[key], objective, metrics)
                    if cache is not None:
                        cache.store(key, params)
                    if not quiet and ("__error__" not in params or verbose):
                        _print_result(params, tune_params, objective, metrics)
                    seconds = (params["compile_time"] + params["verification_time"] + params["benchmark_time"]) / 1000
                elif cache is not None and key in cache.entries:
                    params = {**config, **_without_timings(cache.entries[key])}
                    params.update(compile_time=0.0, verification_time=0.0, benchmark_time=0.0)
                    seconds = 0.0
                else:
                    # The GPU stopped before this configuration: it stays unmeasured.
                    continue
                params["timestamp"] = str(datetime.now(timezone.utc))
                t = time.perf_counter()
                error = params.get("__error__")
                if error is not None:
                    study.tell(
                        config,
                        failure=_FAILURE_OF_ERROR.get(str(error), "runtime"),
                        reason=params.get("__error_reason__", str(error)),
                        seconds=seconds,
                    )
                else:
                    names = list(objectives) if objectives is not None and len(objectives) > 1 else [objective]
                    values = [params.get(n) for n in names]
                    bad = [
                        f"{n} = {v!r}" for n, v in zip(names, values)
                        if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v)
                    ]
                    if bad:
                        study.tell(config, failure="runtime", reason=", ".join(bad), seconds=seconds)
                    elif len(names) > 1:
                        study.tell(config, [float(v) for v in values], seconds=seconds)
                    else:
                        study.tell(config, float(values[0]), seconds=seconds)
                strategy_seconds += time.perf_counter() - t
                results.append(params)
            if evaluator.stopped is not None:
                _fail(evaluator.stopped)
    finally:
        if cache is not None:
            cache.close()
    if results:
        # Amortised over the results, as Kernel Tuner does.
        framework = max(time.perf_counter() - started - strategy_seconds - measured_seconds, 0.0)
        for r in results:
            r["strategy_time"] = 1000 * strategy_seconds / len(results)
            r["framework_time"] = 1000 * framework / len(results)
    return results


def _without_timings(entry):
    # Kernel Tuner's copy_without_benchmark_timings: a cached result costs nothing now.
    return {k: v for k, v in entry.items() if k not in ("compile_time", "verification_time", "benchmark_time", "strategy_time", "framework_time", "timestamp")}


def _result(config, out, objective, metrics):
    params = dict(config)
    if out["status"] == "ok":
        params["time"] = out["time"]
        params["times"] = out["times"]
        for name in ("energy", "power"):
            if name in out:
                params[name] = out[name]
    else:
        params["__error__"] = _ERROR_OF_FAILURE.get(out["status"], RuntimeFailedConfig)()
        params["__error_reason__"] = out["reason"]
    params["compile_time"] = out["compile_time"]
    params["verification_time"] = out["verification_time"]
    params["benchmark_time"] = out["benchmark_time"]
    if metrics and "__error__" not in params:
        _metric_values(metrics, params)
    return params


def _front(results, study, tune_params):
    """The results on the study's Pareto front, by the first objective."""
    by_key = {_key({k: r[k] for k in tune_params}): r for r in results if "__error__" not in r}
    front = [_key(r["config"]) for r in study.pareto_front]
    return [by_key[k] for k in front if k in by_key]


def _picked(results, study, tune_params):
    """The result the study's goal picks (``None`` when nothing ran)."""
    picked = study.pick()
    if picked is None:
        return None
    key = _key(picked["config"])
    return next((r for r in results if "__error__" not in r and _key({k: r[k] for k in tune_params}) == key), None)


def _best(results, objective, higher_is_better):
    valid = [
        r for r in results
        if "__error__" not in r and isinstance(r.get(objective), (int, float)) and math.isfinite(r[objective])
    ]
    if not valid:
        return None
    return (max if higher_is_better else min)(valid, key=lambda r: r[objective])


def tune_kernel(
    kernel_name,
    kernel_source,
    problem_size,
    arguments,
    tune_params,
    grid_div_x=None,
    grid_div_y=None,
    grid_div_z=None,
    restrictions=None,
    answer=None,
    atol=1e-6,
    verify=None,
    verbose=False,
    lang=None,
    device=0,
    platform=0,
    smem_args=None,
    cmem_args=None,
    texmem_args=None,
    compiler=None,
    compiler_options=None,
    defines=None,
    log=None,
    iterations=7,
    block_size_names=None,
    quiet=False,
    strategy=None,
    strategy_options=None,
    cache=None,
    metrics=None,
    simulation_mode=None,
    parallel=None,
    observers=None,
    objective=None,
    objective_higher_is_better=None,
    objectives=None,
    seed=None,
    prior=None,
    goal=None,
):
    """Tunes a CUDA or OpenCL kernel with Kernel Tuner's arguments; returns ``(results, env)``.

    The arguments mean what they mean in Kernel Tuner 1.5 (``kernel_tuner.tune_kernel``):
    ``arguments`` are NumPy arrays and NumPy scalars in the kernel's parameter order;
    ``tune_params`` maps each parameter to its values; ``restrictions`` are expressions;
    ``grid_div_x/y/z`` list the expressions whose product divides the problem size;
    ``answer`` gives the expected output per argument (``None`` elsewhere), compared within
    ``atol``; ``iterations`` timed launches per configuration (their mean is ``time`` in ms);
    ``lang="OpenCL"`` tunes an OpenCL kernel on ``platform`` and ``device`` (indices, as in
    Kernel Tuner; ``ktune devices`` lists them), the global size being the grid times the
    work-group size; without it, CUDA on GPU ``device``.
    ``strategy`` is a Kernel Tuner or ktune strategy name (default ``brute_force``), with
    ``strategy_options`` ``max_fevals`` and ``time_limit`` as the budget and the strategy's own
    options; ``cache`` is a Kernel Tuner cache file, read to skip what it holds and appended to
    as results come; ``metrics`` maps names to expressions (``"2 * n**3 / 1e9 / (time / 1e3)"``)
    or functions of the result dict; ``objective`` names ``time`` or a metric.

    ``prior`` (ktune only) is earlier tuning of the same kernel to start from: a Kernel Tuner
    cache file (another GPU's, or another problem size's), a ktune study or a T4 file, or a
    list of them. The strategy is told them before it starts; ``auto`` tries the
    configurations they rank best first and trusts each as far as it ranks this run's own
    measurements.

    ``results`` lists every configuration measured, in order, as dicts of its parameters,
    ``time``, ``times``, the metrics, ``compile_time``, ``verification_time``,
    ``benchmark_time``, ``strategy_time``, ``framework_time`` (ms) and ``timestamp``; one that
    failed has ``__error__`` (``CompilationFailedConfig``, ``RuntimeFailedConfig`` or
    ``InvalidConfig``) and the reason in ``__error_reason__``. ``env`` describes the device
    and run, with ``best_config``.

    ``objectives`` (as Kernel Tuner 1.5 spells it, ``{"time": False, "GFLOP/s": True}``: each
    name, ``time`` or a metric, and whether higher is better) tunes for several at once, in
    place of ``objective``: the strategy is told every one, ``env["pareto_front"]`` lists the
    results no other beats on all of them (by the first) and ``best_config`` is the best of
    the first. ``"energy"`` (joules per launch) and ``"power"`` (watts) are measured on
    CUDA GPUs through NVML when an objective names them (``{"time": False, "energy":
    False}``), over at least a quarter second of back-to-back launches per configuration;
    every result then has both. ``goal`` (ktune only, with ``objectives``) makes the run seek
    one configuration instead of the whole front: ``"energy within 5% of time"`` (the least
    energy among those at most 5% slower than the fastest) or ``"weighted time=1,
    energy=0.5"``; ``env["goal_config"]`` is the result it picks.

    Not supported, and refused by name: ``texmem_args``, ``defines``, ``observers``,
    ``simulation_mode`` (use ``ktune.simulate``), ``parallel``, ``compiler``,
    ``log``, a custom ``verify`` function, functions as restrictions, problem size or grid
    divisors, and languages other than CUDA and OpenCL (with OpenCL also ``smem_args``,
    ``cmem_args`` and templates: declare ``__local`` arrays, pass ``__constant`` arguments). A templated kernel is named with its arguments
    (``"matmul<float, tile_size_x>"``); a parameter's name there stands for its value.

    Unlike Kernel Tuner, a configuration whose output differs from ``answer`` is recorded as
    failed and tuning goes on; but when the first 8 configurations that ran all differ and
    none matched, ``answer`` (or ``atol``) is the likelier mistake and ``KtuneError`` is
    raised, what was measured kept in ``cache``.
    """
    started = time.perf_counter()
    _refuse_unsupported(dict(locals()))
    np = _numpy()
    if not isinstance(tune_params, dict) or not tune_params:
        _fail("tune_params must be a non-empty dict of parameter names and their values")
    kernel_name, template_args = _template(kernel_name, tune_params)
    source, source_name = _kernel_source(kernel_source, kernel_name)
    sizes = _problem_size(problem_size)
    if not isinstance(arguments, (list, tuple)):
        _fail("arguments must be a list of NumPy arrays and scalars, in the kernel's parameter order")
    raw_args = [_argument(np, f"arguments[{i}]", a) for i, a in enumerate(arguments)]
    answers = _answers(np, answer, arguments)
    if objectives is not None:
        if objective is not None or objective_higher_is_better is not None:
            _fail("give either objective (with objective_higher_is_better) or objectives, not both")
        if not isinstance(objectives, dict) or not objectives:
            _fail("objectives must be a non-empty dict of names to whether higher is better, e.g. {\"time\": False, \"GFLOP/s\": True}")
        for name, higher in objectives.items():
            if not isinstance(higher, bool):
                _fail(f"objectives[{name!r}] is {higher!r}: give True where higher is better, False where lower is")
            if name not in _MEASURED and name not in (metrics or {}):
                _fail(
                    f"objective {name!r} is neither one of {', '.join(map(repr, _MEASURED))} nor one of the metrics {list(metrics or {})}"
                )
        objective, objective_higher_is_better = next(iter(objectives.items()))
    if objective is None:
        objective = "time"
    if objective_higher_is_better is None:
        objective_higher_is_better = False
    if metrics is not None and not isinstance(metrics, dict):
        _fail("metrics must be a dict of names and expressions (or functions)")
    for name, m in (metrics or {}).items():
        if not isinstance(m, str) and not callable(m):
            _fail(f"metrics[{name!r}] is {m!r}: give an expression (a string) or a function of the result")
    compiler_options = _string_list("compiler_options", compiler_options, "['-O3']")
    block_size_names = _string_list("block_size_names", block_size_names, "['bx', 'by']")
    if block_size_names is not None and not any(n in tune_params for n in block_size_names):
        _fail(
            f"block_size_names {block_size_names} names no parameter of tune_params "
            f"({', '.join(tune_params)})"
        )
    _check_cache_path(cache)
    if objective not in _MEASURED and objective not in (metrics or {}):
        _fail(
            f"objective {objective!r} is neither one of {', '.join(map(repr, _MEASURED))} nor one of the metrics {list(metrics or {})}"
        )
    # Energy and power are measured (NVML) only when an objective names them: the power
    # window adds a quarter second of launches to every configuration.
    power = any(n in ("energy", "power") and n not in (metrics or {}) for n in (objectives or {objective: None}))
    opencl = lang is not None and str(lang).upper() == "OPENCL"
    if power and opencl:
        _fail("energy and power are measured on CUDA GPUs (through NVML), not with lang=\"OpenCL\"")
    space = _ktune.SearchSpace(tune_params, _restrictions(restrictions))
    if space.size == 0:
        _fail("no configuration satisfies the restrictions")
    if not isinstance(iterations, int) or isinstance(iterations, bool) or iterations < 1:
        _fail(f"iterations={iterations!r}: give a whole number of launches, at least 1")
    kernel = _ktune.Kernel(
        space,
        kernel_name,
        source,
        source_name,
        sizes,
        raw_args,
        answers=answers,
        atol=float(atol),
        constants=_constants(np, cmem_args),
        block_size_names=block_size_names,
        grid_div_x=_expressions("grid_div_x", grid_div_x),
        grid_div_y=_expressions("grid_div_y", grid_div_y),
        grid_div_z=_expressions("grid_div_z", grid_div_z),
        shared_memory=_shared_memory(smem_args),
        compiler_options=compiler_options or None,
        device=int(device),
        iterations=iterations,
        template_args=template_args,
        lang="opencl" if opencl else "cuda",
        platform=int(platform),
        power=power,
    )
    # Made before the GPU is opened, so that a wrong strategy is reported at once.
    study, time_limit = _study(
        space, strategy, strategy_options, objective, objective_higher_is_better, seed, prior, objectives, goal
    )
    the_cache = _Cache(cache, kernel_name, sizes, tune_params, objective) if cache else None
    kernel.open()
    env = kernel.environment()
    if the_cache is not None:
        the_cache.open(env.get("device_name"))
    if verbose:
        print(f"Searchspace has {space.size} configurations after restrictions.")
    results = _tune(
        kernel,
        study,
        tune_params,
        time_limit=time_limit,
        objective=objective,
        metrics=metrics,
        cache=the_cache,
        quiet=quiet,
        verbose=verbose,
        started=started,
        objectives=objectives,
    )
    env["kernel_name"] = kernel_name
    if objectives is not None and len(objectives) > 1:
        env["objectives"] = dict(objectives)
        env["pareto_front"] = _front(results, study, tune_params)
    if goal is not None:
        env["goal"] = goal
        env["goal_config"] = _picked(results, study, tune_params)
    env["problem_size"] = sizes
    env["objective"] = objective
    for w in env.get("warnings", []):
        print(f"warning: {w}", file=sys.stderr)
    best = _best(results, objective, objective_higher_is_better)
    if best is not None:
        env["best_config"] = best
        if not quiet:
            print(f"\nBEST PERFORMING CONFIGURATION FOR OBJECTIVE {objective}:")
            _print_result(best, tune_params, objective, metrics)
    elif not quiet:
        print("no results to report")
    for part in ("compile", "verification", "benchmark", "strategy", "framework"):
        env[f"total_{part}_time"] = sum(r.get(f"{part}_time", 0.0) for r in results)
    env["overhead_time"] = 1000 * (time.perf_counter() - started)
    return results, env
