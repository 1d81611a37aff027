"""The table of bench/opencl_side_by_side.sh: per kernel and tool, over the seeds, the median
wall time, wall time to the best configuration found, best time found, the tool's overhead
per evaluation, the seconds spent building programs and their share of the wall time, failed
configurations, and distinct configurations measured.

    python3 bench/opencl_summary.py OUT/*.json
"""
import json
import statistics
import sys
from collections import defaultdict

runs = defaultdict(list)
for path in sys.argv[1:]:
    s = json.load(open(path))["summary"]
    runs[(s["kernel"], s["tool"].split("-")[0], s["strategy"])].append(s)


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else float("nan")


print("| kernel | tool | strategy | seeds | wall s | wall s to best | best ms (median) | best ms (min) "
      "| overhead ms/eval | build s | build / wall | failed | distinct evaluated |")
print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for (kernel, tool, strategy), ss in sorted(runs.items()):
    print(
        f"| {kernel} | {tool} | {strategy} | {len(ss)} "
        f"| {med(s['wall_s'] for s in ss):.1f} | {med(s['best_at_wall_s'] for s in ss):.1f} "
        f"| {med(s['best_time_ms'] for s in ss):.3f} | {min(s['best_time_ms'] for s in ss):.3f} "
        f"| {med(s['overhead_per_evaluation_ms'] for s in ss):.1f} | {med(s['compile_s'] for s in ss):.1f} "
        f"| {med(s['compile_share'] for s in ss):.2f} | {sum(s['failed'] for s in ss)} "
        f"| {med(s['unique_configurations'] for s in ss):.0f} |"
    )
