#!/usr/bin/env bash
# Installs the npm packages scripts/prepare_data.sh uses to read parquet, into
# third_party/npm (gitignored):
#   hyparquet             a maintained pure-JS parquet reader (no Debian package reads parquet)
#   hyparquet-compressors gzip / zstd / brotli / lz4 pages (snappy is built into hyparquet)
#   hyparquet-writer      writes the small parquet files of tests/data/prepare_data_test.sh
# Idempotent: does nothing when the pinned versions are already there. The
# test skips (with a message) when they are missing.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="$root/third_party/npm"
# pinned: the converters and their tests are checked against these versions
packages=(hyparquet@1.33.0 hyparquet-compressors@1.1.2 hyparquet-writer@0.17.0)

installed() {  # name@version -> true when that exact version is installed
  local name="${1%@*}" version="${1##*@}"
  local manifest="$dest/node_modules/$name/package.json"
  [[ -f "$manifest" ]] && grep -q "\"version\": *\"$version\"" "$manifest"
}
missing=()
for p in "${packages[@]}"; do installed "$p" || missing+=("$p"); done
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "data tools already installed in $dest"
  exit 0
fi
if ! command -v npm > /dev/null; then
  echo "npm not found: install nodejs and npm (apt-get install nodejs npm) to convert parquet data" >&2
  exit 1
fi
mkdir -p "$dest"
npm install --no-audit --no-fund --save-exact --prefix "$dest" "${missing[@]}"
for p in "${packages[@]}"; do
  installed "$p" || { echo "install_data_tools: $p did not install into $dest" >&2; exit 1; }
done
echo "installed data tools (${packages[*]}) in $dest"
