#!/usr/bin/env bash
# Installs what reprise needs from Debian's packages, if anything is missing.
# nvcc (the CUDA Toolkit) is not a Debian package here: when it is found in
# /usr/local/cuda the CUDA backend is built, otherwise it is left out.
#   scripts/deps.sh            what the build, the tests and the demo need
#   scripts/deps.sh package    also what `dpkg-buildpackage` needs (the
#                              stage "package" of scripts/test.sh)
# RP_NO_DEPS=1 skips the check (a machine whose packages are unpacked
# elsewhere, e.g. scripts/device/env.sh).
set -euo pipefail
[ "${RP_NO_DEPS:-0}" = 1 ] && exit 0
pkgs=(cmake make gcc g++ pkg-config libcjson-dev libcriterion-dev graphviz
      libxrt-dev uuid-dev libstarpu-dev openmpi-bin libopenmpi-dev
      valgrind clang libclang-rt-dev libomp-14-dev libtbb-dev
      libopenblas-dev python3)
if [ "${1:-}" = package ]; then
  pkgs+=(dpkg-dev debhelper fakeroot)
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
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
