# Sourced by the experiment scripts on ALFWorld's real games (alfworld_real.sh,
# alfworld_choice_rl.sh): one checkpoint evaluated greedily on one split of
# the real games (json_2.1.1), 50 steps, in free generation or choice mode.
#   alfworld_real_eval BIN CONFIG DATA TOKENIZER CKPT SPLIT MODE DIR [key=value ...]
# MODE: free, or choice (rollout.eval_constrain_actions: the policy picks one
# of the admissible commands token by token). The evaluation goes to DIR
# (metrics.json, trajectories.jsonl), its log to DIR.log; a DIR that already
# holds metrics.json is kept, so an interrupted sweep continues. Returns
# non-zero (with a message naming the log) when the evaluation fails.
alfworld_real_eval() {
  local bin="$1" config="$2" data="$3" tokenizer="$4" ckpt="$5" split="$6" mode="$7" dir="$8"
  shift 8
  [[ -f "$dir/metrics.json" ]] && return 0
  local constrain=false
  [[ "$mode" == choice ]] && constrain=true
  echo "$ckpt on real $split ($mode) -> $dir"
  "$bin" eval "$config" "$@" tokenizer.train=false tokenizer.path="$tokenizer" alfworld.data_dir="$data" \
    rollout.eval_constrain_actions="$constrain" --model "$ckpt/model" --split "$split" --episodes 0 --out "$dir" \
    > "$dir.log" 2>&1 || { echo "evaluation failed: see $dir.log" >&2; return 1; }
}
