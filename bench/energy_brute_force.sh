#!/usr/bin/env bash
# Issue 47's data: CUDA kernels brute-forced on an NVIDIA GPU with time and energy recorded per
# configuration, for multi-objective tuning on real conflicting objectives. For a machine with
# an NVIDIA GPU, its driver and a CUDA toolkit but no Rust toolchain: build here, carry the
# stripped binary, run there (`.gpu` is git-ignored):
#
#   cargo build --release -p ktune-cli && mkdir -p .gpu && cp target/release/ktune .gpu/ && strip .gpu/ktune
#   (on the GPU machine, from the repository root)  bash bench/energy_brute_force.sh .gpu/ktune "$OUT" [seconds]
#
# Every configuration of a kernel is measured once, in a random order (`random` samples without
# replacement until the space is exhausted), so that a drift of the GPU's clocks or temperature
# over the run is not confounded with any parameter. Time is the objective (CUDA events, the
# example's repetitions); power and energy come from NVML's energy counter over at least
# `power_seconds` of back-to-back launches of the same configuration (`power = true`). Steps,
# in order:
#   matmul     examples/cuda-matmul, 140 configurations
#   reduction  examples/cuda-reduction, 1008 configurations
#   matmul2    the matmul again in another order: how repeatable each configuration's energy is
#   matmul3    (only when named in STEPS) the matmul a third time, e.g. on another board
#   conv       examples/cuda-convolution, 4362 configurations, as far as the time allows
# Each lands in <out>/<step>.db (a ktune study: `ktune results <db> --format cache` exports it);
# <out>/device.txt holds the device's facts, <out>/run.log every step's output. STEPS="reduction
# conv" runs only those; a database already in <out> is resumed (copy it there first).
#
# Each run stops at the wall-clock deadline (a SIGINT, after which the evaluation in flight is
# recorded); a run cut short is resumed by the same command with the same database.
set -u -o pipefail
ktune=$(cd "$(dirname "${1:?usage: energy_brute_force.sh <ktune binary> <out dir> [seconds]}")" && pwd)/$(basename "$1")
out=${2:?usage: energy_brute_force.sh <ktune binary> <out dir> [seconds]}
seconds=${3:-520}
power_seconds=${POWER_SECONDS:-0.1}
jobs=${JOBS:-12}
mkdir -p "$out"
start=$(date +%s)
deadline=$((start + seconds))
log="$out/run.log"

{
    date -u +%FT%TZ
    nvidia-smi --query-gpu=name,uuid,serial,driver_version,vbios_version,clocks.max.sm,clocks.max.mem,power.limit,power.default_limit,temperature.gpu,pstate --format=csv
    nvidia-smi -q -d CLOCK,POWER,PERFORMANCE 2>&1 | sed -n 1,80p
    nvcc --version 2>&1 | tail -2
    echo "cpus: $(nproc)"
    echo "power_seconds=$power_seconds jobs=$jobs steps=${STEPS:-all}"
} >> "$out/device.txt" 2>&1

step() { # tag example seed
    local tag=$1 example=$2 seed=$3 left=$((deadline - $(date +%s)))
    if ((left < 20)); then
        echo "== $tag: skipped, ${left}s left" >> "$log"
        return
    fi
    local spec="examples/$example/energy-$tag.toml"
    # The runner's own options for this data set, added to the example's [runner] section.
    sed "s|^\\[runner\\]\$|[runner]\\npower = true\\npower_seconds = $power_seconds\\njobs = $jobs|" \
        "examples/$example/ktune.toml" > "$spec"
    echo "== $tag: $example, seed $seed, ${left}s left, from $(date -u +%T)" >> "$log"
    local t0=$(date +%s)
    # A wall-clock stop: the first SIGINT lets the evaluation in flight finish and be recorded.
    # (`--time-limit` counts evaluation seconds, which overlapping compiles inflate, and on a
    # resumed study it includes the earlier run's seconds.)
    timeout -s INT -k 30 "$((left - 5))" "$ktune" tune "$spec" --strategy random --seed "$seed" \
        --max-evals 1000000 --db "$out/$tag.db" --quiet >> "$log" 2>&1
    echo "== $tag: exit $? after $(($(date +%s) - t0))s" >> "$log"
    rm -f "$spec"
}

declare -A example=([matmul]=cuda-matmul [reduction]=cuda-reduction [matmul2]=cuda-matmul [matmul3]=cuda-matmul [conv]=cuda-convolution)
declare -A seed=([matmul]=1 [reduction]=1 [matmul2]=2 [matmul3]=3 [conv]=1)
for tag in ${STEPS:-matmul reduction matmul2 conv}; do
    step "$tag" "${example[$tag]}" "${seed[$tag]}"
done
nvidia-smi --query-gpu=temperature.gpu,clocks.sm,power.draw --format=csv >> "$out/device.txt" 2>&1
