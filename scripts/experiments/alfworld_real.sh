#!/usr/bin/env bash
# ALFWorld's real evaluation games, trained on a CPU (issue #21 B): the
# configs/alfworld_real_cpu.yaml recipe over seeds (tokenizer, policy, SFT on
# the prior expert's demonstrations in built-in scenes of the fitted tables,
# RL; scripts/experiments/quickstart_seeds.sh runs them), then every seed's
# SFT checkpoint (step 0) and final checkpoint evaluated greedily on the real
# valid_seen (140) and valid_unseen (134) games, 50 steps, and the
# per-task-type table.
#   scripts/experiments/alfworld_real.sh --data DIR [--seeds "1 2 3"] [--tag NAME] [--choice] [key=value ...]
# DIR is an ALFWorld json_2.1.1 folder (valid_seen/, valid_unseen/), e.g.
# ../shared/data/alfworld/json_2.1.1 on the development machines. Runs go to
# runs/seeds/alfworld_real_TAG/seedS, evaluations to its real/seedS_STAGE_SPLIT/
# (the table's row names; STAGE sft or rl). With --choice every checkpoint is
# also evaluated in choice mode (rollout.eval_constrain_actions: the policy
# picks one of the admissible commands token by token) into
# real/seedS_STAGE_SPLIT_choice. Run it on an otherwise idle machine: the
# training wall times are part of the result.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
source "$ROOT/scripts/experiments/alfworld_real_eval.sh"
seeds="1 2 3"
tag=shipped
data=""
choice=0
overrides=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --seeds) seeds="$2"; shift 2 ;;
    --tag) tag="$2"; shift 2 ;;
    --data) data="$2"; shift 2 ;;
    --choice) choice=1; shift ;;
    -h|--help) sed -n 2,17p "$0"; exit 0 ;;
    *=*) overrides+=("$1"); shift ;;
    *) echo "alfworld_real: unknown argument '$1' (expected --data, --seeds, --tag, --choice or key=value)" >&2; exit 2 ;;
  esac
done
[[ -n "$data" ]] || { echo "alfworld_real: --data DIR (ALFWorld's json_2.1.1 folder) is required" >&2; exit 2; }
[[ -d "$data/valid_seen" && -d "$data/valid_unseen" ]] \
  || { echo "alfworld_real: --data $data: expected the folders valid_seen/ and valid_unseen/ of ALFWorld's json_2.1.1" >&2; exit 2; }
data="$(cd "$data" && pwd)"
cd "$ROOT"
config=configs/alfworld_real_cpu.yaml
bin="${AGENTRL:-build/agentrl}"
scripts/experiments/quickstart_seeds.sh --config "$config" --tag "alfworld_real_$tag" --seeds "$seeds" "${overrides[@]}"
out="runs/seeds/alfworld_real_$tag"
mkdir -p "$out/real"
dirs=()
for s in $seeds; do
  run="$out/seed$s"
  last="$(ls -d "$run"/checkpoints/step_* | sort | tail -1)"
  for stage in sft rl; do
    ckpt="$run/checkpoints/step_000000"
    [[ "$stage" == rl ]] && ckpt="$last"
    for split in valid_seen valid_unseen; do
      for mode in free choice; do
        [[ "$mode" == choice && "$choice" == 0 ]] && continue
        dir="$out/real/seed${s}_${stage}_${split}"
        [[ "$mode" == choice ]] && dir="${dir}_choice"
        dirs+=("$dir")
        alfworld_real_eval "$bin" "$config" "$data" "$run/tokenizer" "$ckpt" "$split" "$mode" "$dir" \
          "${overrides[@]}" || exit 1
      done
    done
  done
done
PY=/usr/bin/python3
[[ -x "$PY" ]] || PY=python3
"$PY" scripts/experiments/alfworld_real_table.py "${dirs[@]}"
