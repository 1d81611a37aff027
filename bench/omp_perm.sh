#!/usr/bin/env bash
# Issue 50's stand-in for the compiler-tuning suite: a dense MTTKRP in C with OpenMP
# (bench/data/omp-perm/mttkrp.c), its four loops inside a block of i in any order (a
# permutation parameter), the block size, the OpenMP schedule and chunk and the innermost
# loop's unrolling: 24 x 4 x 2 x 2 x 2 = 768 configurations, brute-forced by `ktune tune` with
# the command runner on this machine, one configuration at a time. Writes the study
# (<out>/omp-perm.db) and its Kernel Tuner cache (<out>/omp_perm.json.gz), which `ktune bench`
# replays:
#
#   bash bench/omp_perm.sh [out dir (bench/data/omp-perm)]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench/data/omp-perm}
ktune=${KTUNE:-target/release/ktune}
mkdir -p "$out"
src=$(realpath --relative-to="$out" bench/data/omp-perm/mttkrp.c)
spec="$out/spec.toml"
cat > "$spec" <<TOML
# A dense MTTKRP with OpenMP: loop order, block, schedule, chunk, unrolling (bench/omp_perm.sh).
name = "omp-perm"

[[parameter]]
name = "PERM"
description = "the four loops inside a block, outermost first (0 = i, 1 = j, 2 = k, 3 = r)"
type = "permutation"
items = [0, 1, 2, 3]

[[parameter]]
name = "BLOCK"
description = "rows of i per OpenMP iteration"
values = [4, 8, 16, 32]

[[parameter]]
name = "CHUNK"
values = [1, 4]

[[parameter]]
name = "DYNAMIC"
description = "0 = schedule(static, CHUNK), 1 = schedule(dynamic, CHUNK)"
values = [0, 1]

[[parameter]]
name = "UNROLL"
values = [1, 4]

[runner]
kind = "command"
compile = ["gcc", "-O3", "-fopenmp", "-o", "{build_dir}/mttkrp", "$src"]
run = ["{build_dir}/mttkrp"]
defines = true
# One configuration at a time: a compile beside a run would share the two cores with it.
jobs = 1
warmup = 0
repeat = 1
compile_timeout = 30
run_timeout = 30
objective = { name = "time", regex = 'time: (?P<value>[0-9.]+) ms', direction = "minimize" }
TOML
rm -f "$out/omp-perm.db"
"$ktune" tune "$spec" --strategy brute_force --max-evals 100000 --db "$out/omp-perm.db" --quiet
"$ktune" results "$out/omp-perm.db" --format cache --out "$out/omp_perm.json"
gzip -f "$out/omp_perm.json"
