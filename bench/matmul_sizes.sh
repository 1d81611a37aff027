#!/usr/bin/env bash
# Issue 44's multi-size data set: a reduced examples/matmul-cpu (384 configurations: three tile
# sizes of 16-128, three loop orders, two unroll factors, vectorised, -O3) brute-forced by
# `ktune tune` with the command runner at several matrix sizes N, on this machine. Each size is a
# study (<out>/N.db) and a Kernel Tuner cache (<out>/matmul_N.json.gz) that `ktune bench` replays:
#
#   bash bench/matmul_sizes.sh [out dir (bench/data/matmul-sizes)] [sizes (256 512 768)]
#   ktune bench bench/data/matmul-sizes/*.json.gz -s auto --transfer leave-one-out --seeds 20 --out sizes
#
# The spec of each size is written beside its study (spec-N.toml); the program is
# examples/matmul-cpu/matmul.c, whose reported time is the best of 3 multiplications.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench/data/matmul-sizes}
shift || true
sizes=${*:-256 512 768}
ktune=${KTUNE:-target/release/ktune}
mkdir -p "$out"
src=$(realpath --relative-to="$out" examples/matmul-cpu/matmul.c)
for n in $sizes; do
    spec="$out/spec-$n.toml"
    cat > "$spec" <<TOML
# examples/matmul-cpu reduced to 384 configurations, at N = $n (written by bench/matmul_sizes.sh).
name = "matmul-cpu-$n"
constraints = [
    "4 * (TILE_I * TILE_K + TILE_K * TILE_J) <= 262144",
    "max(TILE_I, TILE_J, TILE_K) <= N",
    "LOOP_ORDER not in (0, 2) or TILE_K >= 4 * UNROLL",
    "LOOP_ORDER not in (1, 4) or TILE_J >= 4 * UNROLL",
    "LOOP_ORDER not in (3, 5) or TILE_I >= 4 * UNROLL",
]

[[parameter]]
name = "N"
values = [$n]

[[parameter]]
name = "TILE_I"
values = [16, 32, 64, 128]

[[parameter]]
name = "TILE_J"
values = [16, 32, 64, 128]

[[parameter]]
name = "TILE_K"
values = [16, 32, 64, 128]

[[parameter]]
name = "UNROLL"
values = [1, 4]

[[parameter]]
name = "LOOP_ORDER"
description = "0 = ijk, 1 = ikj, 4 = kij"
values = [0, 1, 4]

[[parameter]]
name = "VECTORIZE"
values = [1]

[runner]
kind = "command"
compile = ["gcc", "-O3", "-fopenmp-simd", "-o", "{build_dir}/matmul", "$src", "-lm"]
run = ["{build_dir}/matmul", "{N}"]
defines = true
# One configuration at a time: a compile beside a run would share the two cores with it.
jobs = 1
warmup = 0
repeat = 1
compile_timeout = 30
run_timeout = 30
objective = { name = "time", regex = 'time: (?P<value>[0-9.]+) ms', direction = "minimize" }
TOML
    rm -f "$out/$n.db"
    "$ktune" tune "$spec" --strategy brute_force --max-evals 100000 --db "$out/$n.db" --quiet
    "$ktune" results "$out/$n.db" --format cache --out "$out/matmul_$n.json"
    gzip -f "$out/matmul_$n.json"
done
