#!/usr/bin/env bash
# The on-GPU check and measurements of the CUDA runner (issue 19), for a machine with an
# NVIDIA GPU, its driver and a CUDA toolkit but no Rust toolchain. Build here, carry, run
# there (BENCHMARKS.md, "The CUDA runner on an H100", has the exact commands):
#
#   cargo build --release -p ktune-cli
#   cargo test --release -p ktune-runners --no-run     # prints the test binary's path
#   mkdir -p .gpu && cp target/release/ktune target/release/deps/ktune_runners-<hash> .gpu/
#   strip .gpu/*                                       # .gpu is git-ignored
#   (on the GPU machine, from the repository root)  bash bench/cuda_gpu_check.sh .gpu "$OUT" [steps]
#
# (bench/gpu_carry.sh fills .gpu with all of it, and with the Python packages under .gpu/py.)
# steps (default: tests examples jobs energy): those four, `measure` and `l2` (issue 17), `python`
# (issue 16: the bindings' GPU tests and the two Kernel Tuner examples run through ktune),
# `pytest` (only the bindings' tests), `clitests` (the command line's CUDA tests, the GPU ones
# included; bench/gpu_carry.sh puts their binary in .gpu/cli_cuda), `objectives` (issue 47:
# the matmul tuned for time and energy at once, its front and a goal's pick), `instances`
# (issue 45: examples/cuda-matmul-sizes, one configuration for three sizes), or
# single runs: example:<kernel>:<strategy> (kernel: matmul, convolution, reduction),
# jobs:<n>:<strategy>, kt:<kernel>:<backend> (bench/kt_cuda.py: Kernel Tuner 1.5, bayes_opt,
# 60 evaluations; backend NVCUDA or CUPY; or `ktune`: the same script through
# ktune.tune_kernel. Both verify against the one reference output of Kernel Tuner's run_kernel,
# computed before the cache is emptied). Add `cold` to empty the CUDA compile cache before every
# run: NVRTC (CUDA 12.9 and later) keeps compiled programs in it across processes, so a run
# after another run of the same kernel compiles several times faster. BENCHMARKS.md's figures:
#   cold example:matmul:bayes_opt example:matmul:random example:convolution:bayes_opt
#   example:reduction:bayes_opt kt:matmul:NVCUDA kt:reduction:NVCUDA kt:convolution:CUPY
#   jobs:1:random jobs:1:bayes_opt jobs:4:random jobs:4:bayes_opt
# Everything lands in <out dir>; one JSON summary line per ktune run in summary.jsonl, per
# Kernel Tuner run in kt-summary.jsonl.
set -u -o pipefail
bin=${1:?usage: cuda_gpu_check.sh <dir with ktune and the ktune_runners test binary> <out dir> [steps]}
out=${2:?usage: cuda_gpu_check.sh <bin dir> <out dir> [steps]}
steps=${3:-tests examples jobs energy}
mkdir -p "$out"
bin=$(cd "$bin" && pwd)
ktune="$bin/ktune"
# Kernel Tuner and the ktune wheel, where bench/gpu_carry.sh put them.
if [[ -d $bin/py ]]; then
    export PYTHONPATH="$bin/py${PYTHONPATH:+:$PYTHONPATH}"
fi
want() { [[ " $steps " == *" $1 "* ]]; }

{
    nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv
    nvcc --version 2>&1 | tail -1
    nproc
} > "$out/device.txt" 2>&1

cache=${CUDA_CACHE_PATH:-$HOME/.nv/ComputeCache}
cold() {
    if want cold; then rm -rf "$cache"; fi
}
export CUPY_CACHE_IN_MEMORY=1

# One tuning run: its --json summary line, tagged, goes to summary.jsonl; the per-evaluation
# lines and the exported results stay in files of their own.
tune() { # tag spec strategy evals [extra ktune args...]
    local tag=$1 spec=$2 strategy=$3 evals=$4
    shift 4
    cold
    rm -f "$out/$tag.db"
    local t0=$(date +%s.%N)
    "$ktune" tune "$spec" --strategy "$strategy" --seed 1 --max-evals "$evals" \
        --db "$out/$tag.db" --json "$@" > "$out/$tag.jsonl" 2> "$out/$tag.err"
    local rc=$? t1=$(date +%s.%N)
    "$ktune" results "$out/$tag.db" --format csv --out "$out/$tag.csv" 2>> "$out/$tag.err"
    tail -1 "$out/$tag.jsonl" | python3 -c "import json,sys; d=json.load(sys.stdin); d['tag']='$tag'; d['rc']=$rc; d['process_wall_s']=$t1-$t0; print(json.dumps(d))" \
        >> "$out/summary.jsonl" 2>> "$out/$tag.err" || echo "{\"tag\": \"$tag\", \"rc\": $rc}" >> "$out/summary.jsonl"
}

# A copy of an example's spec next to it (relative paths keep working) with `line` added
# to its [runner] section.
variant() { # example name line
    local spec="examples/$1/$2.toml"
    sed "s|^\\[runner\\]\$|[runner]\\n$3|" "examples/$1/ktune.toml" > "$spec"
    echo "$spec"
}

# The tests' binaries look for the repository where it was built (CARGO_MANIFEST_DIR, fixed
# at compile time): point that path here when it is missing.
built_at=$(strings "$(ls "$bin"/ktune_runners-* | head -1)" 2>/dev/null | grep -o '/[^ ]*/crates/ktune-runners' | head -1)
if [[ -n $built_at && ! -e ${built_at%/crates/ktune-runners} ]]; then
    mkdir -p "$(dirname "${built_at%/crates/ktune-runners}")"
    ln -s "$PWD" "${built_at%/crates/ktune-runners}"
fi

if want tests; then
    # Every CUDA test, the GPU ones (#[ignore]d elsewhere) included.
    tests=$(ls "$bin"/ktune_runners-* | head -1)
    timeout 300 "$tests" --include-ignored --nocapture --test-threads 1 cuda:: > "$out/gpu-tests.txt" 2>&1
    echo "gpu tests exit $?" >> "$out/gpu-tests.txt"
fi

if want clitests; then
    CARGO_BIN_EXE_ktune="$ktune" timeout 300 "$bin/cli_cuda" --include-ignored --test-threads 1 cuda:: \
        > "$out/cli-gpu-tests.txt" 2>&1
    echo "cli gpu tests exit $?" >> "$out/cli-gpu-tests.txt"
fi

if want pytest; then
    timeout 200 python3 -m pytest -v -rs crates/ktune-py/tests/test_tune_kernel.py > "$out/py-tests.txt" 2>&1
    echo "pytest exit $?" >> "$out/py-tests.txt"
fi

# Several objectives measured on the same launches: 40 evaluations of the matmul by `auto`
# for time and energy, the study's Pareto front, and what the goal "energy within 5% of time"
# picks from it.
if want objectives; then
    spec=$(variant cuda-matmul objectives 'objectives = ["time", "energy"]\npower_seconds = 0.1')
    tune matmul-time-energy "$spec" auto 40
    rm -f "$spec"
    "$ktune" results "$out/matmul-time-energy.db" --pareto > "$out/matmul-time-energy-front.txt" 2>&1
    "$ktune" results "$out/matmul-time-energy.db" --goal "energy within 5% of time" \
        >> "$out/matmul-time-energy-front.txt" 2>&1
fi

# One configuration for three problem sizes (the matmul at 1024, 2048 and 4096).
if want instances; then
    tune matmul-sizes examples/cuda-matmul-sizes/ktune.toml auto 30
fi

example() { # kernel strategy: 60 evaluations, verification on, the default measured
    tune "$1-$2" "examples/cuda-$1/ktune.toml" "$2" 60
}

# 100 evaluations of the matrix multiplication with `jobs` compile threads. Random sampling
# draws the same configurations whatever the batch size, so jobs = 1 and 4 measure the same
# work; bayes_opt's proposals depend on the batch size.
jobs() { # n strategy
    local spec
    spec=$(variant cuda-matmul "jobs$1" "jobs = $1")
    tune "matmul-$2-jobs$1" "$spec" "$2" 100 --no-default
    rm -f "$spec"
}

if want examples; then
    example matmul bayes_opt
    example matmul random
    example convolution bayes_opt
    example reduction bayes_opt
fi
for step in $steps; do
    case $step in
        example:*:*) IFS=: read -r _ kernel strategy <<< "$step"; example "$kernel" "$strategy" ;;
        jobs:*:*) IFS=: read -r _ n strategy <<< "$step"; jobs "$n" "$strategy" ;;
        kt:*:*)
            IFS=: read -r _ kernel backend <<< "$step"
            tool=(--lang "$backend")
            [[ $backend == ktune ]] && tool=(--tool ktune --lang NVCUDA)
            reference=(--reference "$out/reference-$kernel.npz")
            python3 bench/kt_cuda.py --kernel "$kernel" --seed 1 --reference-only "${reference[@]}" \
                > "$out/kt-$kernel-$backend.log" 2>&1
            cold
            python3 bench/kt_cuda.py --kernel "$kernel" --strategy bayes_opt --evals 60 --seed 1 \
                "${tool[@]}" "${reference[@]}" --out "$out/kt-$kernel-$backend.json" >> "$out/kt-$kernel-$backend.log" 2>&1
            tail -1 "$out/kt-$kernel-$backend.log" >> "$out/kt-summary.jsonl"
            ;;
    esac
done

# Issue 16 on the GPU: the bindings' tests (their GPU tests run here instead of skipping) and
# the examples, which are Kernel Tuner scripts with only the import changed.
if want python; then
    python3 -m pytest -v -rs crates/ktune-py/tests/test_tune_kernel.py > "$out/py-tests.txt" 2>&1
    echo "pytest exit $?" >> "$out/py-tests.txt"
    for example in vector_add matmul; do
        cold
        python3 "examples/python/$example.py" > "$out/py-$example.txt" 2>&1
        echo "exit $?" >> "$out/py-$example.txt"
    done
fi

if want jobs; then
    for n in 1 4; do
        jobs "$n" random
        jobs "$n" bayes_opt
    done
fi

# Measurement procedures (issue 17): the matrix multiplication tuned by bayes_opt for 60
# evaluations with the old fixed repetitions (repeat = 7), the adaptive defaults, and the
# adaptive defaults with the L2 cache flushed before every launch; each run ends with an
# interleaved re-measurement of its best 5 (10 rounds), whose winner is the run's final best.
if want measure; then
    for seed in 1 2 3; do
        for variant in fixed7 adaptive flush; do
            spec=examples/cuda-matmul/measure-$variant.toml
            case $variant in
                fixed7) sed 's|^\[runner\]$|[runner]\nrepeat = 7|' examples/cuda-matmul/ktune.toml > "$spec" ;;
                adaptive) cp examples/cuda-matmul/ktune.toml "$spec" ;;
                flush) sed 's|^\[runner\]$|[runner]\nflush_l2 = true|' examples/cuda-matmul/ktune.toml > "$spec" ;;
            esac
            tag=measure-$variant-$seed
            cold
            rm -f "$out/$tag.db"
            t0=$(date +%s.%N)
            "$ktune" tune "$spec" --strategy bayes_opt --seed $seed --max-evals 60 --rerank 5 \
                --db "$out/$tag.db" --json > "$out/$tag.jsonl" 2> "$out/$tag.err"
            rc=$? t1=$(date +%s.%N)
            "$ktune" results "$out/$tag.db" --format csv --out "$out/$tag.csv" 2>> "$out/$tag.err"
            python3 - "$out/$tag.jsonl" "$tag" $rc "$t0" "$t1" >> "$out/measure.jsonl" <<'PY'
import json, sys
path, tag, rc, t0, t1 = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
out = {"tag": tag, "rc": rc, "process_wall_s": t1 - t0}
for line in open(path):
    d = json.loads(line)
    if "summary" in d: out["summary"] = d["summary"]
    if "rerank" in d: out["rerank"] = d["rerank"]
    if "config" in d:
        out["evaluations"] = out.get("evaluations", 0) + 1
        out["samples"] = out.get("samples", 0) + d.get("summary", {}).get("n", 0)
        out["aborted"] = out.get("aborted", 0) + int(d.get("aborted", False))
print(json.dumps(out))
PY
            rm -f "$spec"
        done
    done
fi

# The L2 flush where it matters: the vector addition on 2^20 floats (12 MiB, which fits in an
# H100's 50 MiB L2), all 32 block sizes, adaptive defaults: unflushed, flushed, and unflushed
# with one launch per sample (`alone`: min_sample_seconds = 0, each launch timed by itself).
if want l2; then
    for variant in false true alone; do
        spec=examples/cuda-vector-add/l2-$variant.toml
        case $variant in
            alone) extra='s|^\[runner.verify\]|[runner.measure]\nmin_sample_seconds = 0\n\n[runner.verify]|' ;;
            *) extra="s|^\[runner\]\$|[runner]\nflush_l2 = $variant|" ;;
        esac
        sed -e 's/16777216/1048576/g' -e 's/^repeat = 7$//' -e "$extra" \
            examples/cuda-vector-add/ktune.toml > "$spec"
        tune "l2-$variant" "$spec" brute_force 32
        rm -f "$spec"
    done
fi

if want energy; then
    # NVML's energy counter: how often it moves while the GPU is busy.
    python3 - > "$out/energy-counter.txt" 2>&1 <<'PY'
import time, pynvml, torch
pynvml.nvmlInit()
h = pynvml.nvmlDeviceGetHandleByIndex(0)
a = torch.randn(8192, 8192, device="cuda")
changes, last, t0 = [], pynvml.nvmlDeviceGetTotalEnergyConsumption(h), time.perf_counter()
while time.perf_counter() - t0 < 2.0:
    a @ a
    e = pynvml.nvmlDeviceGetTotalEnergyConsumption(h)
    if e != last:
        changes.append((time.perf_counter() - t0, e - last))
        last = e
torch.cuda.synchronize()
gaps = [b[0] - a_[0] for a_, b in zip(changes, changes[1:])]
print(f"energy counter changes in 2 s under load: {len(changes)}; median gap {sorted(gaps)[len(gaps)//2]*1e3:.1f} ms; "
      f"median step {sorted(c[1] for c in changes)[len(changes)//2]} mJ; power now {pynvml.nvmlDeviceGetPowerUsage(h)/1e3:.0f} W")
PY
    spec=$(variant cuda-reduction energy 'objective = "energy"')
    tune reduction-energy "$spec" bayes_opt 30
    rm -f "$spec"
    spec=$(variant cuda-matmul efficiency 'objective = "GFLOP/s per watt"')
    tune matmul-gflops-per-watt "$spec" bayes_opt 30
    rm -f "$spec"
fi
