"""Reading brute-forced Kernel Tuner cache files for the bench scripts (standard library only,
so they run without the peer virtualenv)."""

import gzip
import json
import math
from pathlib import Path


def load(path) -> dict:
    """A cache file, gzipped (`.gz`) or not."""
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        return json.load(f)


def name(path) -> str:
    """The space's name: the file name without `.json` or `.json.gz`."""
    return Path(path).name.removesuffix(".gz").removesuffix(".json")


def ran(data: dict, objective: str = "time") -> dict:
    """The configurations that ran (their objective a finite number), by cache key."""
    return {
        key: rec
        for key, rec in data.get("cache", data).items()
        if isinstance(rec.get(objective), (int, float)) and math.isfinite(rec[objective])
    }
