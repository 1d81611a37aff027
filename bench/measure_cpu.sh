#!/usr/bin/env bash
# Issue 17 on the CPU: examples/matmul-cpu tuned by bayes_opt (60 evaluations, seeds 1-3)
# with the old fixed repetitions (`repeat = 1`: one run per configuration; the program itself
# reports the best of 3 timings) and with the adaptive defaults, one after the other per seed;
# every run ends with an interleaved re-measurement of its best 5 (10 rounds), whose winner
# is the run's final best. VARIANTS picks the procedures (default "fixed adaptive"); `min2` is
# the adaptive procedure with `[runner.measure] min = 2`.
#
#   cargo build --release -p ktune-cli && bash bench/measure_cpu.sh <out dir>
set -u -o pipefail
out=${1:?usage: measure_cpu.sh <out dir>}
mkdir -p "$out"
ktune=${KTUNE:-target/release/ktune}
for seed in 1 2 3; do
    for variant in ${VARIANTS:-fixed adaptive}; do
        spec=examples/matmul-cpu/measure-$variant.toml
        case $variant in
            fixed) cp examples/matmul-cpu/ktune.toml "$spec" ;;
            adaptive) grep -v '^repeat = ' examples/matmul-cpu/ktune.toml > "$spec" ;;
            min2) { grep -v '^repeat = ' examples/matmul-cpu/ktune.toml
                    printf '\n[runner.measure]\nmin = 2\n'; } > "$spec" ;;
        esac
        tag=$variant-$seed
        rm -f "$out/$tag.db"
        t0=$(date +%s.%N)
        "$ktune" tune "$spec" --strategy bayes_opt --seed $seed --max-evals 60 --time-limit 100000 \
            --rerank 5 --db "$out/$tag.db" --json > "$out/$tag.jsonl" 2> "$out/$tag.err"
        rc=$? t1=$(date +%s.%N)
        python3 - "$out/$tag.jsonl" "$tag" $rc "$t0" "$t1" >> "$out/measure.jsonl" <<'PY'
import json, sys
path, tag, rc, t0, t1 = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
out = {"tag": tag, "rc": rc, "process_wall_s": t1 - t0, "evaluations": 0, "samples": 0, "aborted": 0}
for line in open(path):
    d = json.loads(line)
    if "summary" in d: out["summary"] = d["summary"]
    if "rerank" in d: out["rerank"] = d["rerank"]
    if "config" in d:
        out["evaluations"] += 1
        out["samples"] += d.get("summary", {}).get("n", 1 if d.get("status") == "ok" else 0)
        out["aborted"] += int(d.get("aborted", False))
print(json.dumps(out))
PY
        rm -f "$spec"
    done
done
python3 - "$out/measure.jsonl" <<'PY'
import json, sys
print("tag rc wall_s evaluations samples aborted best_in_run_ms rerank_winner_ms winner_changed")
for l in open(sys.argv[1]):
    d = json.loads(l); s = d.get("summary", {}); r = d.get("rerank", {})
    f = (r.get("finalists") or [{}])[0]
    print(d["tag"], d["rc"], round(d["process_wall_s"], 1), d["evaluations"], d["samples"], d["aborted"],
          (s.get("best") or {}).get("time"), f.get("after"), r.get("winner_changed"), f.get("configuration"))
PY
