#!/usr/bin/env bash
# Builds the Debian packages (debian/) with `dpkg-buildpackage -us -uc -b`
# in a copy of the tree under build-package/ (dpkg-buildpackage writes the
# .deb files beside the source folder), then checks them: the six packages
# are there, hold what they should, the tool starts, the man pages name
# /usr/share/doc/reprise, and a program builds against the unpacked
# libreprise-dev with pkg-config and with find_package. The stage "package"
# of scripts/test.sh; CUDA, tests and examples off (debian/rules).
#   usage: scripts/package.sh [BUILD_DIR]   (default build-package)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build-package}
t0=$SECONDS
scripts/deps.sh package
rm -rf "$dir"
mkdir -p "$dir/reprise"
dir=$(cd "$dir" && pwd)        # absolute: CMAKE_PREFIX_PATH below needs it
# the working tree as git sees it (tracked and new files, not ignored ones)
if git rev-parse --git-dir >/dev/null 2>&1; then
  git ls-files -z --cached --others --exclude-standard |
    tar --null -T - --ignore-failed-read -cf - 2>/dev/null |
    tar -xf - -C "$dir/reprise"
else
  tar --exclude='./build*' --exclude=./out -cf - . | tar -xf - -C "$dir/reprise"
fi
echo "== package: dpkg-buildpackage -us -uc -b (log: $dir/build.log)"
(cd "$dir/reprise" &&
 DEB_BUILD_OPTIONS="parallel=$(nproc) nocheck noddebs" dpkg-buildpackage -us -uc -b) \
  >"$dir/build.log" 2>&1 || { tail -40 "$dir/build.log"; exit 1; }
echo "== package: built in $((SECONDS - t0)) s:"
ls "$dir"/*.deb | sed 's|^|  |'

fail() { echo "FAIL (package): $*"; exit 1; }
arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
root=$dir/root
for p in libreprise0 libreprise-dev reprise-tools reprise-doc \
         libreprise-starpu libreprise-xrt; do
  deb=$(ls "$dir/${p}"_*.deb 2>/dev/null | head -1)
  [ -n "$deb" ] || fail "no package $p"
  dpkg -x "$deb" "$root"
done
lib=$root/usr/lib/$arch
for f in "$lib/libreprise.so.0" "$lib/libreprise.a" "$root/usr/bin/reprise" \
         "$root/usr/include/reprise.h" "$lib/cmake/reprise/repriseConfig.cmake" \
         "$lib/pkgconfig/reprise.pc" "$lib/reprise/libreprise-starpu.so" \
         "$lib/reprise/libreprise-xrt.so" "$lib/libreprise-starpu.a" \
         "$root/usr/share/doc/reprise/design.md" \
         "$root/usr/share/doc/reprise/install.md" \
         "$root/usr/share/man/man1/reprise-analyze.1.gz" \
         "$root/usr/share/man/man3/libreprise.3.gz" \
         "$root/usr/share/man/man7/reprise.7.gz"; do
  [ -e "$f" ] || fail "no ${f#"$root"}"
done
zgrep -qx '.ds Rd /usr/share/doc/reprise' "$root/usr/share/man/man1/reprise.1.gz" ||
  fail "reprise(1) does not name /usr/share/doc/reprise"
# the shared library needs no vendor package; the plugins do
deps=$(dpkg-deb -f "$dir"/libreprise0_*.deb Depends)
echo "  libreprise0 depends: $deps"
echo "$deps" | grep -q libcjson || fail "libreprise0 does not depend on cJSON"
echo "$deps" | grep -Eq 'starpu|xrt|mpi|cuda' && fail "libreprise0: $deps"
dpkg-deb -f "$dir"/libreprise-starpu_*.deb Depends | grep -q libstarpu ||
  fail "libreprise-starpu does not depend on StarPU"
# no run path in a system folder; the tool starts
readelf -d "$root/usr/bin/reprise" | grep -q 'R.*PATH' && fail "reprise has a RUNPATH"
LD_LIBRARY_PATH=$lib "$root/usr/bin/reprise" --version
# a program on the unpacked development package (relocatable .pc and
# CMake package), run with LD_LIBRARY_PATH (the .pc of /usr has no run path)
grep -q rpath "$lib/pkgconfig/reprise.pc" && fail "reprise.pc of /usr has a run path"
# shellcheck disable=SC2046
cc -std=c11 -o "$dir/pc_shared" tests/consumer/main.c \
  $(PKG_CONFIG_PATH=$lib/pkgconfig pkg-config --cflags --libs reprise)
LD_LIBRARY_PATH=$lib "$dir/pc_shared"
cmake -S tests/consumer -B "$dir/cm" -DCMAKE_PREFIX_PATH="$root/usr" \
      -DFORM=static >"$dir/cm.log" 2>&1 || { cat "$dir/cm.log"; fail "cmake"; }
cmake --build "$dir/cm" >>"$dir/cm.log" 2>&1 || { cat "$dir/cm.log"; fail "build"; }
"$dir/cm/consumer_static"
echo "== package: ok in $((SECONDS - t0)) s"
