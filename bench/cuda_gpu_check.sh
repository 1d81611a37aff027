#!/usr/bin/env bash
# The on-GPU check of the CUDA runner (issue 7), for a machine with an NVIDIA GPU, its driver
# and a CUDA toolkit but no Rust toolchain. Build here, carry, run there:
#
#   cargo build --release -p ktune-cli
#   cargo test --release -p ktune-runners --no-run 2>&1 | grep -o 'target/release/deps/ktune_runners-[0-9a-f]*' | head -1
#   mkdir -p .gpu && cp target/release/ktune <that test binary> .gpu/   # .gpu is git-ignored
#   (on the GPU machine)  bash bench/cuda_gpu_check.sh .gpu "$OUT"
#
# It runs the GPU tests, then tunes examples/cuda-matmul with BO and with random sampling
# (40 evaluations each, verification on) and exports what was measured.
set -u -o pipefail
bin=${1:?usage: cuda_gpu_check.sh <dir with ktune and the ktune_runners test binary> <out dir>}
out=${2:?usage: cuda_gpu_check.sh <bin dir> <out dir>}
mkdir -p "$out"
# NVRTC from the toolkit: libnvrtc.so (or .so.12) must be on the library path.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
{
    nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv
    ls /usr/local/cuda/lib64/libnvrtc* 2>&1
} | tee "$out/device.txt"
tests=$(ls "$bin"/ktune_runners-* | head -1)
"$tests" --ignored --nocapture cuda:: 2>&1 | tee "$out/gpu-tests.txt"
for strategy in bayes_opt random; do
    rm -f "$out/$strategy.db"
    /usr/bin/time -v "$bin/ktune" tune examples/cuda-matmul/ktune.toml --strategy "$strategy" \
        --seed 1 --db "$out/$strategy.db" 2>&1 | tee "$out/tune-$strategy.txt"
    "$bin/ktune" results "$out/$strategy.db" --format csv --out "$out/$strategy.csv"
done
