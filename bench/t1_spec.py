"""A T1 spec (`../shared/data/t1/*.json`) as Kernel Tuner's inputs, for the scripts that time
search-space construction (`kt_space_build.py`, `python_space.py`)."""
import json


def load(path):
    """`(tune_params, restrictions)`: each parameter's values and each condition's expression."""
    with open(path) as f:
        spec = json.load(f)["ConfigurationSpace"]
    tune_params = {}
    for p in spec["TuningParameters"]:
        values = p["Values"]
        # T1 writes some value lists as Python expressions (ranges, comprehensions).
        tune_params[p["Name"]] = eval(values) if isinstance(values, str) else values  # noqa: S307
    return tune_params, [c["Expression"] for c in spec.get("Conditions", [])]
