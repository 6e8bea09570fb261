#!/usr/bin/env bash
# README command 1: set up (packages + build), then train the quickstart
# agent on CPU: SentencePiece tokenizer on env text -> small policy -> SFT on
# a few expert demos -> RL (EMPG on GRPO) -> held-out evaluation, and plot
# the curves into runs/quickstart/metrics.png.
#   scripts/quickstart.sh [key=value overrides...]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh"
cd "$ROOT"
build/agentrl train configs/quickstart.yaml "$@"
if python3 -c 'import matplotlib' 2>/dev/null; then
  python3 scripts/plot_metrics.py runs/quickstart/metrics.jsonl --out runs/quickstart/metrics.png
fi
