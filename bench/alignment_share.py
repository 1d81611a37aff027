#!/usr/bin/env python3
"""How often the fastest configurations of a brute-forced space use each parameter value.

For each space (Kernel Tuner cache format, gzipped or not) and each parameter with more than
one value: per value, its share among the fastest `--top` fraction of the configurations that
ran, beside its share of all of them. BENCHMARKS.md (issue 18, "The model sees alignment")
cites convolution_W6600's block_size_x and tile sizes from this output.

    python3 bench/alignment_share.py ../shared/data/spaces/convolution_W6600.json.gz [--top 0.05]
"""

import argparse
import signal
from collections import Counter
from pathlib import Path

from kt_cache import load, ran


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("spaces", nargs="+", type=Path)
    ap.add_argument("--objective", default="time")
    ap.add_argument("--top", type=float, default=0.05, help="the fastest fraction (0-1)")
    args = ap.parse_args()
    for path in args.spaces:
        d = load(path)
        done = sorted(ran(d, args.objective).values(), key=lambda c: c[args.objective])
        top = done[: max(1, int(len(done) * args.top))]
        print(f"{path.name}: {len(done)} configurations ran, the fastest {len(top)}")
        for key in d["tune_params_keys"]:
            everywhere = Counter(c[key] for c in done)
            if len(everywhere) < 2:
                continue
            fastest = Counter(c[key] for c in top)
            shares = ", ".join(
                f"{v}: {fastest[v] / len(top):.2f}/{everywhere[v] / len(done):.2f}"
                for v in sorted(everywhere)
            )
            print(f"  {key} (fastest/all): {shares}")


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends the output quietly
    main()
