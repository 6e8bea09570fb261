#!/usr/bin/env bash
# Runs the whole test suite: setup (packages + build), then every CTest test
# (labels unit, integration, slow). Extra arguments go to ctest, e.g.
#   scripts/test.sh -L unit
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
"$ROOT/scripts/setup.sh"
cd "$BUILD_DIR"
ctest --output-on-failure -j "${JOBS:-$(nproc)}" --timeout 900 "$@"
