"""Tune a pure-Python objective with ktune: the ask/tell loop, then `optimize`.

    pip install ./crates/ktune-py
    python examples/python/ask_tell.py

The objective stands in for a benchmark: a "kernel" whose run time depends on its block
size, tile and unroll factor, that fails to "compile" for some configurations (raised as an
exception: recorded as a failure, tuning goes on). Results go to tuning.db; running the
script again resumes the study instead of measuring anything twice.
"""
import ktune

tune_params = {
    "block_size_x": [16, 32, 64, 128, 256],
    "block_size_y": [1, 2, 4, 8],
    "tile": [1, 2, 4, 8],
    "unroll": [0, 1, 2, 4],
}
restrictions = ["block_size_x * block_size_y <= 512", "block_size_x * tile <= 1024"]


def run_time(config):
    if config["unroll"] == 4 and config["tile"] == 8:
        raise RuntimeError("too many registers")
    threads = config["block_size_x"] * config["block_size_y"]
    return 1.0 + abs(threads - 256) / 128 + (config["tile"] - 4) ** 2 / 4 + abs(config["unroll"] - 2) / 2


study = ktune.Study(tune_params, restrictions, strategy="bayes_opt", max_evals=60,
                    storage="sqlite:///tuning.db", study_name="example", seed=1)
print(f"{study.space}; {len(study)} results already stored")

# Ask/tell: you run the measurement.
for _ in range(10):
    config = study.ask()
    if config is None:
        break
    try:
        study.tell(config, run_time(config))
    except RuntimeError as e:
        study.tell(config, failure="compile", reason=str(e))

# Or let the study call the objective.
best = study.optimize(run_time)
failed = sum(r["status"] != "ok" for r in study.results)
print(f"{len(study)} evaluations ({failed} failed), stopped: {study.stopped}")
print(f"best: {best['value']:.3f} at {best['config']}")
