#!/usr/bin/env bash
# Peak memory and time of one PPO update at the Qwen2.5-0.5B shape: full
# fine-tuning vs LoRA r16 on all linear layers, with and without the KL
# reference. Each case runs in its own process (peak RSS is per process).
#   scripts/bench/lora_memory.sh [build-dir]
set -euo pipefail
build="${1:-build}"
ninja -C "$build" lora_bench >/dev/null
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-2}"
for args in 0/0 0/1 1/0 1/1; do
  lora="${args%/*}" kl="${args#*/}"
  "$build/lora_bench" --benchmark_filter="BM_PpoUpdate05B/lora:${lora}/kl:${kl}/" | grep BM_
done
