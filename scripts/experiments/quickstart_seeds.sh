#!/usr/bin/env bash
# The quickstart over seeds: one full quickstart (tokenizer, init, SFT, RL,
# evaluation) per seed, each with runtime.seed = model.init.seed = S, one after
# another, then the seed table (after SFT vs after RL, greedy and sampled,
# mean +- std, wall time) from their metrics.jsonl.
#   scripts/experiments/quickstart_seeds.sh [--seeds "1 2 3"] [--tag NAME] [--config FILE] [--no-table] [key=value ...]
# Runs go to runs/seeds/TAG/seedS (TAG default "shipped"); a seed whose run
# already finished is not run again, so an interrupted sweep continues where
# it stopped (a half-finished seed is started over). Needs build/agentrl
# (scripts/setup.sh), or the binary named by $AGENTRL (e.g. a copy, so that
# rebuilding during a sweep does not change it). Run it on an otherwise idle
# machine: the wall times are part of the table. --no-table: train only (for
# scripts that make their own table, e.g. of RL runs without an SFT stage).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
seeds="1 2 3 4 5 6 7 8 9 10"
tag=shipped
config=configs/quickstart.yaml
table=1
overrides=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --seeds) seeds="$2"; shift 2 ;;
    --tag) tag="$2"; shift 2 ;;
    --config) config="$2"; shift 2 ;;
    --no-table) table=0; shift ;;
    -h|--help) sed -n 2,14p "$0"; exit 0 ;;
    *=*) overrides+=("$1"); shift ;;
    *) echo "quickstart_seeds: unknown argument '$1' (expected --seeds, --tag, --config, --no-table or key=value)" >&2
       exit 2 ;;
  esac
done
cd "$ROOT"
bin="${AGENTRL:-build/agentrl}"
[[ -x "$bin" ]] || { echo "quickstart_seeds: $bin missing: run scripts/setup.sh first" >&2; exit 2; }
out="runs/seeds/$tag"
mkdir -p "$out"
printf '%s\n' "binary: $bin ($(git rev-parse --short HEAD 2>/dev/null || echo '?'))" "config: $config" "overrides: ${overrides[*]:-}" "started: $(date -Is)" "load: $(cut -d' ' -f1-3 /proc/loadavg)" \
  >> "$out/sweep.txt"
for s in $seeds; do
  dir="$out/seed$s"
  if [[ -f "$dir/wall_s.txt" ]]; then echo "seed $s: done before ($dir)"; continue; fi
  rm -rf "$dir"
  echo "seed $s: training -> $dir ($(date +%H:%M:%S), load $(cut -d' ' -f1 /proc/loadavg))"
  t0=$(date +%s.%N)
  "$bin" train "$config" runtime.output_dir="$out" runtime.name="seed$s" runtime.seed="$s" \
    model.init.seed="$s" "${overrides[@]}" > "$out/seed$s.stdout" 2>&1 \
    || { echo "seed $s failed: see $out/seed$s.stdout" >&2; exit 1; }
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f\n", b - a }' > "$dir/wall_s.txt"
done
[[ "$table" == 1 ]] || exit 0
PY=/usr/bin/python3
[[ -x "$PY" ]] || PY=python3
"$PY" scripts/experiments/seed_table.py "$out"
