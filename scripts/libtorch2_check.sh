#!/usr/bin/env bash
# Builds and tests agentrl against LibTorch 2.x on a Debian 12 machine that has
# neither a GPU nor a Python wheel: Debian 13 (trixie) ships libtorch-dev 2.6
# (CPU). A trixie chroot made with debootstrap holds it and the other build
# dependencies (Debian's package archive only); the repository is bind-mounted
# into it, built into build-torch2/ and tested there. Needs root (debootstrap,
# chroot, mount). The chroot stays for the next run (~2.5 GB).
#
#   sudo scripts/libtorch2_check.sh                       # build + ctest -L unit (bar the sandboxed codetool tests)
#   sudo scripts/libtorch2_check.sh --ctest "-R model"    # other ctest arguments
#   sudo scripts/libtorch2_check.sh --run "build-torch2/model_bench --benchmark_filter=BM_Forward"
#   ROOTFS=/var/tmp/trixie sudo -E scripts/libtorch2_check.sh
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ROOTFS="${ROOTFS:-/var/tmp/agentrl-trixie}"
MIRROR="${MIRROR:-http://deb.debian.org/debian}"
# The codetool env's tests run model code in a bubblewrap sandbox, which
# cannot make user namespaces inside a chroot: they are left out here.
ctest_args="-L unit -E '^Codetool(Env|VoidTurn)\.'"
run_cmd=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --ctest) ctest_args="$2"; shift 2 ;;
    --run) run_cmd="$2"; shift 2 ;;
    -h|--help) sed -n 2,13p "$0"; exit 0 ;;
    *) echo "libtorch2_check: unknown argument '$1' (expected --ctest ARGS or --run COMMAND)" >&2; exit 2 ;;
  esac
done
[[ $(id -u) -eq 0 ]] || { echo "libtorch2_check: needs root (debootstrap, chroot, mount)" >&2; exit 2; }

# The build dependencies of scripts/setup.sh that a build and the unit tests
# need (no browser, no npm: those tests skip themselves).
PACKAGES=(build-essential cmake ninja-build pkg-config git libtorch-dev libgloo-dev libopenblas0-openmp
  libsentencepiece-dev libyaml-cpp-dev libspdlog-dev libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev libcli11-dev libpcre2-dev libutf8proc-dev libxapian-dev libcpp-httplib-dev
  libprotobuf-dev protobuf-compiler bubblewrap python3 python3-numpy python3-sympy libjs-dygraphs)

if [[ ! -x "$ROOTFS/usr/bin/apt-get" ]]; then
  command -v debootstrap >/dev/null || apt-get install -y -q debootstrap
  echo "libtorch2_check: debootstrap trixie -> $ROOTFS"
  debootstrap --variant=minbase trixie "$ROOTFS" "$MIRROR"
fi
cp /etc/resolv.conf "$ROOTFS/etc/resolv.conf"
mkdir -p "$ROOTFS/src"
cleanup() {
  umount "$ROOTFS/src" 2>/dev/null || true
  umount "$ROOTFS/proc" 2>/dev/null || true
}
trap cleanup EXIT
mountpoint -q "$ROOTFS/proc" || mount -t proc proc "$ROOTFS/proc"
mountpoint -q "$ROOTFS/src" || mount --bind "$ROOT" "$ROOTFS/src"

in_root() { chroot "$ROOTFS" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 bash -c "$1"; }
missing=$(in_root "for p in ${PACKAGES[*]}; do dpkg-query -W -f='\${Status}' \$p 2>/dev/null | grep -q 'install ok installed' || echo \$p; done")
if [[ -n "$missing" ]]; then
  in_root "apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $(echo $missing)"
fi
in_root "dpkg-query -W -f='libtorch-dev \${Version}\n' libtorch-dev"
in_root "cd /src && { [[ -f build-torch2/CMakeCache.txt ]] || cmake -S . -B build-torch2 -G Ninja -DCMAKE_BUILD_TYPE=Release; } \
  && cmake --build build-torch2 -j $(nproc)"
if [[ -n "$run_cmd" ]]; then
  in_root "cd /src && export OMP_NUM_THREADS=$(nproc) && $run_cmd"
else
  in_root "cd /src/build-torch2 && ctest --output-on-failure -j $(nproc) --timeout 900 $ctest_args"
fi
