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
# Debian's python3 has python3-matplotlib (setup installs it); a python3 from
# pyenv or a venv earlier on PATH may not.
PY=/usr/bin/python3
[[ -x "$PY" ]] || PY=python3
if "$PY" -c 'import matplotlib' 2>/dev/null; then
  "$PY" scripts/plot_metrics.py runs/quickstart/metrics.jsonl --out runs/quickstart/metrics.png
else
  echo "quickstart: matplotlib not available; skipped the plot" >&2
fi
