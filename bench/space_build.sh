#!/usr/bin/env bash
# Search-space construction, ktune beside Kernel Tuner 1.5, on the four T1 specs.
#   bash bench/space_build.sh            (needs ~/.venvs/kt with ../shared/tools/kt-peer/requirements.lock)
# Prints, per spec: ktune's build time in a fresh process and its peak RSS, then Kernel Tuner's
# first and best-of-5 construction and peak RSS.
set -euo pipefail
cd "$(dirname "$0")/.."
KT_PY=${KT_PY:-$HOME/.venvs/kt/bin/python}
cargo build --release -q -p ktune-cli
for f in convolution dedispersion gemm hotspot; do
    spec=../shared/data/t1/$f.json
    rss=$( { /usr/bin/time -f "%M" ./target/release/ktune space --json "$spec" > /tmp/ktune-space.json; } 2>&1 )
    python3 -c "import json; d=json.load(open('/tmp/ktune-space.json')); print('ktune          $f: size %d, build %.2f ms (fresh process), peak RSS %.1f MiB' % (d['size'], d['build_seconds']*1e3, $rss/1024))"
    if [ -x "$KT_PY" ]; then
        printf 'Kernel Tuner   '; "$KT_PY" bench/kt_space_build.py "$spec" | sed "s|$spec|$f|"
    fi
done
