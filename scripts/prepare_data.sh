#!/usr/bin/env bash
# Turns the files downloaded with the original projects' own instructions into
# what agentrl reads (Search-R1, SimpleTIR-style math, wiki-18), or checks
# them where agentrl reads the originals directly (ALFWorld, WebShop), and
# prints the config keys to set. docs/data.md has the table.
# The work is done by scripts/data/convert.mjs (node); parquet is read with
# the npm packages that scripts/install_data_tools.sh installs.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

usage() {
  cat <<'EOF'
usage: scripts/prepare_data.sh KIND ARGS...

Converters (output written atomically; --limit N keeps the first N rows):
  search-r1 IN.parquet OUT.jsonl        Search-R1's QA parquet -> FlashRAG QA JSONL (Deep Search env)
      scripts/prepare_data.sh search-r1 data/nq_hotpotqa_train/train.parquet data/qa/train.jsonl
      scripts/prepare_data.sh search-r1 data/nq_hotpotqa_train/test.parquet data/qa/test.jsonl
  math IN.parquet|IN.jsonl|IN.json OUT.jsonl
                                        SimpleTIR / DeepScaleR / AIME / MATH500 -> math JSONL (code-tool env)
      scripts/prepare_data.sh math SimpleTIR/datasets/deepscaler/aime.parquet data/math/aime.jsonl
      scripts/prepare_data.sh math MATH-500/test.jsonl data/math/math500.jsonl
  wiki18 IN.jsonl[.gz] OUT.jsonl         Search-R1's wiki-18 corpus -> corpus JSONL for `agentrl index build`
      scripts/prepare_data.sh wiki18 wiki-18.jsonl.gz data/wiki-18.jsonl

Checks (nothing written; agentrl reads these files as they are):
  alfworld DIR [--eval-only]            ALFWorld's json_2.1.1 (train, valid_seen, valid_unseen)
      scripts/prepare_data.sh alfworld ~/.cache/alfworld/json_2.1.1
  webshop DIR | FILE...                 WebShop's data/ folder, or its files
      scripts/prepare_data.sh webshop WebShop/data
      scripts/prepare_data.sh webshop items_shuffle_1000.json items_ins_v2_1000.json items_human_ins.json

Exit status: 0 done, 1 bad input (the message names the file, row/line and what was expected), 2 bad usage.
EOF
}

if [[ $# -eq 0 || "$1" == "-h" || "$1" == "--help" ]]; then
  usage
  [[ $# -eq 0 ]] && exit 2
  exit 0
fi
case "$1" in
  search-r1|math|wiki18|alfworld|webshop) ;;
  *) echo "prepare_data: unknown kind '$1' (expected search-r1, math, wiki18, alfworld or webshop; see --help)" >&2; exit 2 ;;
esac
if ! command -v node > /dev/null; then
  echo "prepare_data: node not found: install nodejs (apt-get install nodejs npm), then run scripts/install_data_tools.sh" >&2
  exit 1
fi
exec node "$root/scripts/data/convert.mjs" "$@"
