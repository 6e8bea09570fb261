#!/usr/bin/env bash
# RL in choice mode on ALFWorld (issue #21 B): from the SFT checkpoints of an
# alfworld_real.sh run, the configs/alfworld_real_cpu.yaml RL stage again,
# but with choice-mode training rollouts (rollout.constrain_actions: each
# response is decoded within the admissible commands, and the trainer scores
# the same masked distributions), then the final checkpoint evaluated
# greedily on the real valid_unseen (134) and valid_seen (140) games, 50
# steps, in choice mode and in free generation, and the per-task-type table.
#   scripts/experiments/alfworld_choice_rl.sh --data DIR --from RUNS [--seeds "1 2 3"] [--tag NAME] [key=value ...]
# DIR is ALFWorld's json_2.1.1 folder; RUNS an alfworld_real.sh output
# (runs/seeds/alfworld_real_TAG) whose seedS/ hold the SFT checkpoint
# (checkpoints/step_000000) and tokenizer. Runs go to
# runs/seeds/alfworld_choice_rl_TAG/seedS, evaluations to its
# real/seedS_rl_SPLIT[_choice]/ (the training by quickstart_seeds.sh, the
# evaluations by alfworld_real_eval.sh). Run it on an otherwise idle machine:
# the training wall times are part of the result.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
source "$ROOT/scripts/experiments/alfworld_real_eval.sh"
seeds="1 2 3"
tag=shipped
data=""
from=""
overrides=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --seeds) seeds="$2"; shift 2 ;;
    --tag) tag="$2"; shift 2 ;;
    --data) data="$2"; shift 2 ;;
    --from) from="$2"; shift 2 ;;
    -h|--help) sed -n 2,16p "$0"; exit 0 ;;
    *=*) overrides+=("$1"); shift ;;
    *) echo "alfworld_choice_rl: unknown argument '$1' (expected --data, --from, --seeds, --tag or key=value)" >&2
       exit 2 ;;
  esac
done
[[ -n "$data" && -d "$data/valid_seen" && -d "$data/valid_unseen" ]] \
  || { echo "alfworld_choice_rl: --data DIR must be ALFWorld's json_2.1.1 folder (valid_seen/, valid_unseen/)" >&2; exit 2; }
[[ -n "$from" && -d "$from" ]] \
  || { echo "alfworld_choice_rl: --from RUNS must be an alfworld_real.sh output folder (runs/seeds/alfworld_real_TAG)" >&2; exit 2; }
data="$(cd "$data" && pwd)"
from="$(cd "$from" && pwd)"
cd "$ROOT"
config=configs/alfworld_real_cpu.yaml
bin="${AGENTRL:-build/agentrl}"
[[ -x "$bin" ]] || { echo "alfworld_choice_rl: $bin missing: run scripts/setup.sh first" >&2; exit 2; }
out="runs/seeds/alfworld_choice_rl_$tag"
mkdir -p "$out/real"
dirs=()
for s in $seeds; do
  sft="$from/seed$s"
  [[ -d "$sft/checkpoints/step_000000/model" && -d "$sft/tokenizer" ]] \
    || { echo "alfworld_choice_rl: $sft has no SFT checkpoint (checkpoints/step_000000) or tokenizer/" >&2; exit 2; }
  # The recipe's RL stage from this seed's SFT checkpoint (timed; a seed that
  # finished before is kept). rollout.constrain_actions also goes to the
  # evaluations: keys such as actor.choice_mass_coef need it; evaluation
  # itself decodes by rollout.eval_constrain_actions alone.
  rl=(tokenizer.train=false tokenizer.path="$sft/tokenizer" model.path="$sft/checkpoints/step_000000/model"
      sft.enabled=false rollout.constrain_actions=true "${overrides[@]}")
  AGENTRL="$bin" scripts/experiments/quickstart_seeds.sh --config "$config" --tag "alfworld_choice_rl_$tag" \
    --seeds "$s" --no-table "${rl[@]}"
  run="$out/seed$s"
  last="$(ls -d "$run"/checkpoints/step_* | sort | tail -1)"
  for split in valid_unseen valid_seen; do
    for mode in choice free; do
      dir="$out/real/seed${s}_rl_${split}"
      [[ "$mode" == choice ]] && dir="${dir}_choice"
      dirs+=("$dir")
      alfworld_real_eval "$bin" "$config" "$data" "$sft/tokenizer" "$last" "$split" "$mode" "$dir" \
        rollout.constrain_actions=true "${overrides[@]}" || exit 1
    done
  done
done
PY=/usr/bin/python3
[[ -x "$PY" ]] || PY=python3
"$PY" scripts/experiments/alfworld_real_table.py "${dirs[@]}"
