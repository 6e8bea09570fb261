#!/usr/bin/env bash
# The estimators compared on the quickstart (issue #21 A): one quickstart
# sweep per estimator over the same seeds (scripts/experiments/quickstart_seeds.sh),
# then the comparison table and the learning-curve figure
# docs/estimators_quickstart.png (compare_estimators.py): held-out success after RL,
# greedy and sampled, mean +- std, paired per seed against grpo, EMPG's
# diagnostics and Li's logit-update norm.
#   scripts/experiments/compare_estimators.sh [--seeds "1 2 3 4 5"] [--estimators "grpo empg gigpo dapo dapo_empg"]
# Estimators (everything else is configs/quickstart.yaml, clip 0.2/0.28 in all):
#   empg       the shipped config: EMPG on GRPO (runs/seeds/sft6, shared with issue #27's sweep)
#   grpo       algorithm.adv_estimator=grpo
#   gigpo      algorithm.adv_estimator=gigpo
#   dapo       grpo + dynamic sampling (zero_variance filter) + token-mean loss
#   dapo_empg  EMPG on the DAPO base + dynamic sampling + token-mean loss
# Every run of seed S starts from the same SFT policy: SFT is deterministic
# (rollout.deterministic), which the "after SFT" columns show. A finished
# seed is not run again, so an interrupted comparison continues.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
seeds="1 2 3 4 5"
estimators="grpo empg gigpo dapo dapo_empg"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --seeds) seeds="$2"; shift 2 ;;
    --estimators) estimators="$2"; shift 2 ;;
    -h|--help) sed -n 2,17p "$0"; exit 0 ;;
    *) echo "compare_estimators: unknown argument '$1' (expected --seeds or --estimators)" >&2; exit 2 ;;
  esac
done
cd "$ROOT"
dirs=()
for e in $estimators; do
  case "$e" in
    empg) tag=sft6; over=() ;;
    grpo) tag=grpo; over=(algorithm.adv_estimator=grpo) ;;
    gigpo) tag=gigpo; over=(algorithm.adv_estimator=gigpo) ;;
    dapo) tag=dapo; over=(algorithm.adv_estimator=grpo "algorithm.filters=[zero_variance]" actor.loss_agg=token-mean) ;;
    dapo_empg) tag=dapo_empg; over=(algorithm.adv_estimator=empg algorithm.empg.base=dapo "algorithm.filters=[zero_variance]" actor.loss_agg=token-mean) ;;
    *) echo "compare_estimators: unknown estimator '$e' (grpo, empg, gigpo, dapo, dapo_empg)" >&2; exit 2 ;;
  esac
  echo "== $e (runs/seeds/$tag)"
  scripts/experiments/quickstart_seeds.sh --seeds "$seeds" --tag "$tag" "${over[@]}"
  dirs+=("$e=runs/seeds/$tag")
done
PY=/usr/bin/python3
[[ -x "$PY" ]] || PY=python3
"$PY" scripts/experiments/compare_estimators.py --seeds "$seeds" --plot docs/estimators_quickstart.png "${dirs[@]}"
