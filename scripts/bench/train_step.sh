#!/usr/bin/env bash
# The quickstart's PPO micro-batch (forward + backward, build/model_bench's
# BM_TrainStep) with glibc malloc's defaults and with agentrl's tuning
# (core/malloc_tuning.h), one after the other in one invocation, then the
# ratios. Each BM_TrainStep row also compares the full forward (only=0) with
# the loss rows' last layer (only=1).
#   scripts/bench/train_step.sh [build-dir]
# Run on an otherwise idle machine; OMP_NUM_THREADS defaults to 2.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${1:-$ROOT/build}"
cmake --build "$BUILD" --target model_bench >/dev/null
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-2}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
AGENTRL_MALLOC_TUNING=0 "$BUILD/model_bench" --benchmark_filter=BM_TrainStep --benchmark_format=json >"$out/default.json"
"$BUILD/model_bench" --benchmark_filter=BM_TrainStep --benchmark_format=json >"$out/tuned.json"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$out/default.json" "$out/tuned.json" <<'PY'
import json, sys
rows = {}
for label, path in (("default", sys.argv[1]), ("tuned", sys.argv[2])):
    for b in json.load(open(path))["benchmarks"]:
        name = b["name"].split("/min_time")[0].split("/real_time")[0].replace("BM_TrainStep/", "")
        rows.setdefault(name, {})[label] = b["real_time"]
print("| micro-batch | glibc defaults | tuned malloc | speed-up |")
print("|---|---|---|---|")
for name, t in rows.items():
    print(f"| {name} | {t['default']:.0f} ms | {t['tuned']:.0f} ms | {t['default'] / t['tuned']:.2f}x |")
pairs = {}
for name, t in rows.items():
    key = name.replace("/only:1", "").replace("/only:0", "")
    pairs.setdefault(key, {})["only" if name.endswith("only:1") else "full"] = t["tuned"]
print()
print("| micro-batch (tuned malloc) | full forward | loss rows only | speed-up |")
print("|---|---|---|---|")
for key, p in pairs.items():
    print(f"| {key} | {p['full']:.0f} ms | {p['only']:.0f} ms | {p['full'] / p['only']:.2f}x |")
PY
