#!/bin/sh
# Every package set of scripts/deps.sh that installs a C compiler can link
# with it: installs run with --no-install-recommends, and gcc only
# *recommends* libc6-dev (crt1.o, libc.so), so a set naming gcc must name
# libc6-dev too. On a fresh Debian 12 root (debootstrap, 2026-12-04) the
# demo's set without it failed CMake's compiler check ("cannot find
# Scrt1.o") and the README's first command exited 1.
#   usage: deps_sets.sh SOURCE
set -u
src=$1
fail=0
for set in demo demo-build all package; do
  pkgs=$(RP_DEPS_LIST=1 RP_NO_DEPS=0 bash "$src/scripts/deps.sh" "$set") || {
    echo "FAIL: scripts/deps.sh $set: exit $?"; fail=1; continue; }
  if echo "$pkgs" | grep -qx gcc && ! echo "$pkgs" | grep -qx libc6-dev; then
    echo "FAIL: set $set installs gcc without libc6-dev (gcc only recommends it)"
    fail=1
  fi
  echo "$pkgs" | grep -qx cmake || { echo "FAIL: set $set has no cmake"; fail=1; }
done
[ $fail -eq 0 ] && echo "deps sets: every set with gcc names libc6-dev"
exit $fail
