#!/usr/bin/env python3
"""Summarise the time-and-energy data of bench/data/h200-energy or bench/data/h100-energy
(issue 47): coverage of each kernel's space, how repeatable a configuration's time and energy
are (the matrix multiplication was measured two or three times: `matmul3` on another board),
and each kernel's time/energy Pareto front over what was measured. Studies missing from the
folder are left out.

Reads the ktune study databases directly (Python's sqlite3), so it needs no ktune build:

    python3 bench/energy_data.py [bench/data/h200-energy | bench/data/h100-energy]
"""

import json
import math
import sqlite3
import statistics
import sys
from pathlib import Path

SPACE_SIZES = {"matmul": 140, "matmul2": 140, "matmul3": 140, "reduction": 1008, "conv": 4362}


def load(path):
    """{configuration key: (seq, status, time ms, energy J, power W)} of one study."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    rows = {}
    for config, seq, status, objective, observed in db.execute(
        "SELECT config, seq, status, objective, observed FROM evaluations ORDER BY seq"
    ):
        obs = json.loads(observed or "{}")
        rows[config] = (seq, status, objective, obs.get("energy_j"), obs.get("power_w"))
    return rows


def relative_differences(a, b, index):
    return [
        abs(a[k][index] / b[k][index] - 1)
        for k in a
        if k in b and a[k][1] == "ok" and b[k][1] == "ok"
    ]


def front(rows):
    """The configurations no other one beats in both time and energy (both minimised)."""
    ok = sorted((v[2], v[3], k) for k, v in rows.items() if v[1] == "ok" and v[3] is not None)
    out, best_energy = [], math.inf
    for time, energy, key in ok:
        if energy < best_energy:
            out.append((time, energy, key))
            best_energy = energy
    return out


def main():
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else "bench/data/h200-energy")
    data = {name: load(folder / f"{name}.db") for name in SPACE_SIZES if (folder / f"{name}.db").exists()}
    print("coverage")
    for name, rows in data.items():
        failed = sum(v[1] != "ok" for v in rows.values())
        print(f"  {name:10} {len(rows):5} of {SPACE_SIZES[name]:5} configurations, {failed} failed")
    print("repeatability of the matmul (relative difference per configuration: median, 90th percentile, max)")
    for label, a, b in [
        ("same board  (matmul, matmul2)", "matmul", "matmul2"),
        ("other board (matmul, matmul3)", "matmul", "matmul3"),
        ("other board (matmul2, matmul3)", "matmul2", "matmul3"),
    ]:
        if a not in data or b not in data:
            continue
        for index, what in [(2, "time"), (3, "energy")]:
            d = sorted(relative_differences(data[a], data[b], index))
            print(
                f"  {label} {what:6}: {statistics.median(d):.2%} {d[int(0.9 * (len(d) - 1))]:.2%} {d[-1]:.2%}"
            )
    print("time/energy fronts over the measured configurations")
    for name, rows in data.items():
        f = front(rows)
        fastest_time, fastest_energy = f[0][0], f[0][1]
        print(f"  {name}: {len(f)} on the front")
        for time, energy, key in f:
            print(
                f"    time {time:.4f} ms (+{time / fastest_time - 1:.1%})  energy {energy:.5f} J "
                f"({energy / fastest_energy - 1:+.1%})  [{key}]"
            )


if __name__ == "__main__":
    main()
