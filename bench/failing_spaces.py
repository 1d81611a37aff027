"""Development spaces where the fastest configurations sit right beside failing ones.

On real GPUs the best configurations are often at a resource limit: one more tile row and the
shared memory, the registers or the threads per block run out, and the configuration fails to
compile or launch. The brute-forced caches in the shared data set have few such failures, so
this script makes variants of them: a resource measure of each configuration (the work of a
thread block: threads times the tile) is computed, and every configuration whose resource
exceeds the optimum's fails (as `RuntimeFailedConfig`, as Kernel Tuner records a launch
failure). The optimum stays valid and sits at the limit.

    python3 bench/failing_spaces.py ../shared/data/spaces/*.json.gz --out /tmp/failing

writes `<name>_limit.json.gz` per space and prints each one's share of failing configurations
(the base rate that random sampling pays). Then, for example:

    ktune bench --strategies baco,bayes_opt,random --seeds 20 /tmp/failing/*.json.gz --out bench-out
"""
import argparse
import gzip
import json
import pathlib


def resource(params):
    """Threads per block times outputs per thread: what shared memory, registers and the
    thread limit scale with in both kernels of the data set."""
    threads = params.get("block_size_x", 1) * params.get("block_size_y", 1) * params.get("block_size_z", 1)
    tile = params.get("tile_size_x", 1) * params.get("tile_size_y", 1)
    return threads * tile


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("spaces", nargs="+")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for path in map(pathlib.Path, args.spaces):
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt") as f:
            data = json.load(f)
        cache = data["cache"]
        valid = {k: v for k, v in cache.items() if isinstance(v.get("time"), (int, float))}
        best = min(valid, key=lambda k: valid[k]["time"])
        limit = resource(valid[best])
        failed = 0
        for entry in cache.values():
            if isinstance(entry.get("time"), (int, float)) and resource(entry) > limit:
                entry["time"] = "RuntimeFailedConfig"
            if not isinstance(entry.get("time"), (int, float)):
                failed += 1
        name = path.name.split(".")[0] + "_limit"
        with gzip.open(out / f"{name}.json.gz", "wt") as f:
            json.dump(data, f)
        print(f"{name}: {len(cache)} configurations, {failed / len(cache):.1%} fail "
              f"(limit {limit}, the optimum's resource)")


if __name__ == "__main__":
    main()
