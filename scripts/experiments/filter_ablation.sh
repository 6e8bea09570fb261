#!/usr/bin/env bash
# SimpleTIR's void-turn filter switched off, from the SFT policies of a seed
# sweep that had it on (issue #22):
#   scripts/experiments/filter_ablation.sh [--from runs/seeds/codetool] [--seeds "1 2 3"] [--config FILE] [key=value ...]
# For each seed S of the sweep (scripts/experiments/quickstart_seeds.sh
# --config configs/codetool_cpu.yaml --tag codetool), RL starts again from that
# run's SFT checkpoint (step_000000: the same policy and tokenizer, no SFT
# stage) with algorithm.filters=[] and the same seed, into FROM_nofilter/seedS;
# then scripts/experiments/filter_table.py prints both arms (the "after SFT"
# numbers of the new runs are their sweep's step-0 evaluation, same policy).
# A seed already finished is not run again. Needs build/agentrl or $AGENTRL.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
from=runs/seeds/codetool
seeds="1 2 3"
config=configs/codetool_cpu.yaml
overrides=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --from) from="$2"; shift 2 ;;
    --seeds) seeds="$2"; shift 2 ;;
    --config) config="$2"; shift 2 ;;
    -h|--help) sed -n 2,11p "$0"; exit 0 ;;
    *=*) overrides+=("$1"); shift ;;
    *) echo "filter_ablation: unknown argument '$1' (expected --from, --seeds, --config or key=value)" >&2; exit 2 ;;
  esac
done
cd "$ROOT"
bin="${AGENTRL:-build/agentrl}"
[[ -x "$bin" ]] || { echo "filter_ablation: $bin missing: run scripts/setup.sh first" >&2; exit 2; }
out="${from%/}_nofilter"
mkdir -p "$out"
printf '%s\n' "binary: $bin ($(git rev-parse --short HEAD 2>/dev/null || echo '?'))" "from: $from" "config: $config" \
  "overrides: ${overrides[*]:-}" "started: $(date -Is)" "load: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/sweep.txt"
for s in $seeds; do
  sft="$from/seed$s/checkpoints/step_000000/model"
  [[ -f "$sft/model.safetensors" ]] || { echo "filter_ablation: no SFT checkpoint $sft (run the sweep first)" >&2; exit 2; }
  dir="$out/seed$s"
  if [[ -f "$dir/wall_s.txt" ]]; then echo "seed $s: done before ($dir)"; continue; fi
  rm -rf "$dir"
  echo "seed $s: RL without the filter -> $dir ($(date +%H:%M:%S), load $(cut -d' ' -f1 /proc/loadavg))"
  t0=$(date +%s.%N)
  "$bin" train "$config" runtime.output_dir="$out" runtime.name="seed$s" runtime.seed="$s" model.init.seed="$s" \
    model.path="$sft" tokenizer.train=false sft.enabled=false 'algorithm.filters=[]' "${overrides[@]}" \
    > "$out/seed$s.stdout" 2>&1 || { echo "seed $s failed: see $out/seed$s.stdout" >&2; exit 1; }
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f\n", b - a }' > "$dir/wall_s.txt"
done
PY=/usr/bin/python3
[[ -x "$PY" ]] || PY=python3
"$PY" scripts/experiments/filter_table.py "filter=$from" "no filter=$out:$from"
