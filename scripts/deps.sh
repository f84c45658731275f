#!/usr/bin/env bash
# Installs what reprise needs from Debian's packages, if anything is missing.
# nvcc (the CUDA Toolkit) is not a Debian package here: when it is found in
# /usr/local/cuda the CUDA backend is built, otherwise it is left out.
#   scripts/deps.sh            everything the build and the tests need
#   scripts/deps.sh package    also what `dpkg-buildpackage` needs (the
#                              stage "package" of scripts/test.sh)
#   scripts/deps.sh demo       only what scripts/demo.sh needs: a C
#                              compiler, CMake, cJSON and Graphviz
#   scripts/deps.sh SET...     the sets demo-build (compiler, CMake, cJSON),
#                              demo-draw (Graphviz) and cxx (g++, the host
#                              compiler nvcc needs), for scripts/demo.sh
# RP_NO_DEPS=1 skips the check (a machine whose packages are unpacked
# elsewhere, e.g. scripts/device/env.sh).
set -euo pipefail
[ "${RP_NO_DEPS:-0}" = 1 ] && exit 0
# libc6-dev: gcc only recommends it, and --no-install-recommends leaves it
# out, so on a fresh machine cc cannot link (no crt1.o, no libc.so)
build=(cmake make gcc libc6-dev libcjson-dev)
draw=(graphviz)
all=("${build[@]}" g++ pkg-config libcriterion-dev "${draw[@]}" libxrt-dev
     uuid-dev libstarpu-dev openmpi-bin libopenmpi-dev valgrind clang
     libclang-rt-dev libomp-14-dev libtbb-dev libopenblas-dev python3)
pkgs=()
[ $# -eq 0 ] && set -- all
for set in "$@"; do
  case $set in
    all) pkgs+=("${all[@]}") ;;
    package) pkgs+=("${all[@]}" dpkg-dev debhelper fakeroot) ;;
    demo) pkgs+=("${build[@]}" "${draw[@]}") ;;
    demo-build) pkgs+=("${build[@]}") ;;
    demo-draw) pkgs+=("${draw[@]}") ;;
    cxx) pkgs+=(g++) ;;
    *) echo "scripts/deps.sh: unknown set '$set'" \
            "(all, package, demo, demo-build, demo-draw, cxx)" >&2
       exit 2 ;;
  esac
done
# RP_DEPS_LIST=1: print the sets' packages, one a line, and install nothing
# (tests/packaging/deps_sets.sh).
if [ "${RP_DEPS_LIST:-0}" = 1 ]; then
  printf '%s\n' "${pkgs[@]}"
  exit 0
fi
# One dpkg-query for all: the installed ones print "NAME install ok
# installed"; the others are missing.
installed=$(dpkg-query -W -f='${Package} ${Status}\n' "${pkgs[@]}" 2>/dev/null |
            awk '/ ok installed$/ { print $1 }' || true)
missing=()
for p in "${pkgs[@]}"; do
  grep -qx "$p" <<<"$installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "reprise: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
# A fresh image has no package lists: update only then (or when asked).
if [ "${RP_APT_UPDATE:-auto}" = 1 ] ||
   ! compgen -G "/var/lib/apt/lists/*_Packages*" >/dev/null; then
  $sudo apt-get update -q
fi
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}" || {
  # stale lists (a package moved on the mirror): once more after an update
  $sudo apt-get update -q
  $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
}
