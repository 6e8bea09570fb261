#!/usr/bin/env bash
# Generation compute side by side (issue #20): agentrl's engine against the
# HF-style Python loop on the same LibTorch (scripts/bench/python_generate_ref.py)
# and against the machine's GEMM peak, in one go, with the ratios.
#   scripts/bench/compare.sh [--shape tiny|qwen0.5b] [--rounds N] [--build DIR] [--before LIBDIR] [--long]
# Builds the benchmark binaries it needs in DIR (default build/), then:
#   1. the GEMM peak (model_bench BM_Matmul, 512-row products of the 0.5B MLP),
#   2. the tensor ops of one decode step at batch 1, 8, 64 and the pure matmul
#      time of a decode step (engine_bench BM_DecodeStepOps, BM_DecodeMatmulFloor),
#   3. N rounds (default 3) of engine prefill/decode (engine_bench BM_Engine)
#      and the Python loop, interleaved so that both sides see the same
#      machine state; 64-token prompts, greedy, 64 new tokens (tiny) or 8 (0.5B),
# and prints one table (medians over rounds; the ratio range is over rounds,
# each ratio from the same round). --before LIBDIR: each round also runs the
# engine benchmark against the agentrl libraries in LIBDIR (the build folder
# of an earlier commit, via LD_LIBRARY_PATH; its own engine_bench if LIBDIR
# holds one), for a before/after column. --long (tiny shape): each round also
# prefills long prompts, 1 x 2048, 8 x 512 and 8 x 64 tokens (engine_bench
# BM_EnginePrefill, the contexts of the WebShop and ALFWorld recipes) against
# the Python loop at the same batch and prompt length, for a second table.
# OMP_NUM_THREADS defaults to all cores.
# Run it on an otherwise idle machine and note the load it prints.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
shape=tiny
rounds=3
build=build
before=
long=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --shape) shape="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --build) build="$2"; shift 2 ;;
    --before) before="$(cd "$2" && pwd)"; shift 2 ;;
    --long) long=1; shift ;;
    -h|--help) sed -n 2,22p "$0"; exit 0 ;;
    *) echo "compare: unknown argument '$1' (expected --shape, --rounds, --build, --before or --long)" >&2; exit 2 ;;
  esac
done
case "$shape" in
  tiny) which=0; batches="1 8 32 64"; new=64; floor="BM_DecodeMatmulFloor/0/1/" ;;
  qwen0.5b) which=1; batches="1 8"; new=8; floor="BM_DecodeMatmulFloor/1/" ;;
  *) echo "compare: --shape $shape: expected tiny or qwen0.5b" >&2; exit 2 ;;
esac
[[ "$long" == 0 || "$shape" == tiny ]] || { echo "compare: --long measures the tiny shape only (got --shape $shape)" >&2; exit 2; }
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "compare: --rounds $rounds: expected a positive integer" >&2; exit 2; }
cd "$ROOT"
[[ -z "$before" || -f "$before/libagentrl_model.so" ]] || { echo "compare: --before $before holds no libagentrl_model.so" >&2; exit 2; }
# The earlier commit's own engine_bench when the folder has one (needed once
# the benchmark calls what the earlier libraries lack), else this build's.
before_bench="$build/engine_bench"
[[ -n "$before" && -x "$before/engine_bench" ]] && before_bench="$before/engine_bench"
[[ -f "$build/CMakeCache.txt" ]] || { echo "compare: $build is not a configured build folder: run scripts/setup.sh first" >&2; exit 2; }
cmake --build "$build" --target engine_bench model_bench >/dev/null \
  || { echo "compare: building engine_bench/model_bench failed (Google Benchmark installed? scripts/setup.sh)" >&2; exit 1; }
PY=/usr/bin/python3
[[ -x "$PY" ]] || PY=python3
"$PY" -c 'import torch' 2>/dev/null \
  || { echo "compare: $PY cannot import torch: the Python reference needs Debian's python3-torch (apt-get install python3-torch)" >&2; exit 2; }
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-$(nproc)}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
echo "compare: shape $shape, $rounds rounds, OMP_NUM_THREADS=$OMP_NUM_THREADS, $(date -Is), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
json=(--benchmark_format=json)
"$build/model_bench" --benchmark_filter='BM_Matmul/512/' "${json[@]}" > "$out/gemm.json"
"$build/engine_bench" --benchmark_filter="BM_DecodeStepOps|$floor" "${json[@]}" > "$out/ops.json"
batch_re="$(echo "$batches" | tr ' ' '|')"
for r in $(seq "$rounds"); do
  filter=(--benchmark_filter="BM_Engine/$which/($batch_re)/$new(/|\$)" "${json[@]}")
  "$build/engine_bench" "${filter[@]}" > "$out/engine_$r.json"
  if [[ -n "$before" ]]; then
    LD_LIBRARY_PATH="$before" "$before_bench" "${filter[@]}" > "$out/before_$r.json"
  fi
  # shellcheck disable=SC2086  # batches is a list of numbers
  "$PY" scripts/bench/python_generate_ref.py --shape "$shape" --batch $batches --new "$new" > "$out/python_$r.txt"
  if [[ "$long" == 1 ]]; then
    "$build/engine_bench" --benchmark_filter='BM_EnginePrefill/0/' "${json[@]}" > "$out/long_engine_$r.json"
    for bp in "1 2048" "8 512" "8 64"; do
      read -r b p <<< "$bp"
      "$PY" scripts/bench/python_generate_ref.py --shape tiny --batch "$b" --prompt "$p" --new 2
    done > "$out/long_python_$r.txt"
  fi
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
"$PY" scripts/bench/compare_table.py "$out" "$which"
