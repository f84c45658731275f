#!/usr/bin/env bash
# Installs what reprise needs from Debian's packages, if anything is missing.
# nvcc (the CUDA Toolkit) is not a Debian package here: when it is found in
# /usr/local/cuda the CUDA backend is built, otherwise it is left out.
set -euo pipefail
pkgs=(cmake make gcc g++ pkg-config libcjson-dev libcriterion-dev graphviz
      libxrt-dev uuid-dev libstarpu-dev openmpi-bin libopenmpi-dev
      valgrind clang libclang-rt-dev libomp-14-dev libtbb-dev
      libopenblas-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
    missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "reprise: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
