#!/bin/sh
# The installed library as a project outside reprise meets it (ctest
# entries consumer_*, tests/consumer/consumer.cmake). Every build of the
# consumer runs in a cleared environment (env -i: no CC, no
# LD_LIBRARY_PATH, no CMAKE_PREFIX_PATH; PATH of cmake, the compiler and
# pkg-config only, never nvcc's folder).
#   run.sh install BUILD SRC WORK   install BUILD into WORK/prefix; check the
#                                   CMake package, the manuals and the docs
#   run.sh shared  BUILD SRC WORK   find_package, the shared library, with
#                                   CUDAToolkit, OpenMP and Threads hidden
#   run.sh static  BUILD SRC WORK   find_package, reprise::static and each
#                                   reprise::static_<backend>
#   run.sh pkgconfig BUILD SRC WORK pkg-config, shared (starts without
#                                   LD_LIBRARY_PATH) and static
#   run.sh cxx     BUILD SRC WORK   a C++ program on reprise.hpp, through
#                                   find_package and pkg-config
set -eu
step=$1 build=$2 src=$3 work=$4
case $work in /*) ;; *) work=$PWD/$work ;; esac   # CMAKE_PREFIX_PATH below
prefix=$work/prefix
t0=$(date +%s)
fail() { echo "FAIL ($step): $*"; exit 1; }

# the prefix's libdir, from the installed pkg-config file
libdir_of() {
  pc=$(ls "$prefix"/lib*/pkgconfig/reprise.pc 2>/dev/null | head -1)
  [ -n "$pc" ] || fail "no reprise.pc under $prefix: did consumer_install run?"
  dirname "$(dirname "$pc")"
}
# a PATH with the tools only: cmake's, the compiler's and pkg-config's
# folders (never /usr/local/cuda/bin)
clean_path=""
for t in cmake cc c++ pkg-config; do
  d=$(dirname "$(command -v $t)")
  case ":$clean_path:" in *":$d:"*) ;; *) clean_path=$clean_path${clean_path:+:}$d ;; esac
done
# RP_CLEAN_KEEP: variables kept all the same (scripts/device/first_contact.sh
# keeps LD_LIBRARY_PATH, where the GPU machine's unpacked packages are)
keep=""
for v in ${RP_CLEAN_KEEP:-}; do
  eval "keep=\"\$keep $v=\${$v:-}\""
done
# shellcheck disable=SC2086
clean() { env -i PATH="$clean_path" HOME="$work/home" LC_ALL=C $keep "$@"; }
gpu=no
[ -e /dev/nvidia0 ] && gpu=yes
# consumer PROGRAM auto: runs on a CPU backend (its kernel has no CUDA
# body), whatever the machine has
auto_picks_cpu() {
  out=$(clean "$1" auto 2>&1) || fail "$1 auto: $out"
  echo "$out" | grep -Eq 'backend (openmp|reference): ok' ||
    fail "$1 auto did not take a CPU backend: $out"
}
# consumer PROGRAM cuda on a GPU: refused, naming the kernel
cuda_refuses() {
  out=$(clean "$1" cuda 2>&1) && fail "$1 ran its CPU-only kernel on cuda"
  echo "$out" | grep -q 'kernel op [0-9]* "axpy" has no CUDA implementation' ||
    fail "$1 cuda: $out"
}

case $step in
install)
  rm -rf "$work"
  mkdir -p "$work/home"
  cmake --install "$build" --prefix "$prefix" >"$work/install.log"
  libdir=$(libdir_of)
  for f in repriseConfig.cmake repriseConfigVersion.cmake \
           repriseTargets.cmake reprise_staticTargets.cmake; do
    test -f "$libdir/cmake/reprise/$f" || fail "no $f"
  done
  # manuals: one per command, naming the installed documentation folder
  doc=$prefix/share/doc/reprise
  for f in design.md format.md install.md README.md LICENSE; do
    test -f "$doc/$f" || fail "no $doc/$f"
  done
  for p in man1/reprise.1 man1/reprise-analyze.1 man1/reprise-run.1 \
           man1/reprise-dot.1 man1/reprise-check.1 man1/reprise-calibrate.1 \
           man3/libreprise.3 man7/reprise.7; do
    grep -qx ".ds Rd $doc" "$prefix/share/man/$p" ||
      fail "$p does not name $doc"
  done
  # man finds the installed page and renders it (where man-db is
  # installed: a minimized system's /usr/bin/man is a stub that only says
  # how to unminimize, and the pages' files are checked above)
  if man --version 2>/dev/null | grep -q '^man '; then
    where=$(MANPATH="$prefix/share/man" man -w reprise-analyze) ||
      fail "man -w reprise-analyze"
    [ "$where" = "$prefix/share/man/man1/reprise-analyze.1" ] ||
      fail "man -w reprise-analyze: $where"
    MANPATH="$prefix/share/man" MANWIDTH=80 man reprise-analyze 2>&1 |
      grep -q "^EXIT STATUS" || fail "man reprise-analyze does not render"
  fi
  ;;
shared)
  # the shared library must not need CUDA (its backend is a plugin), nor
  # anything else: hide every package the static targets would look for
  rm -rf "$work/shared"
  if clean sh -c 'command -v nvcc' >/dev/null; then
    fail "nvcc is on the cleared PATH $clean_path"
  fi
  clean cmake -S "$src/tests/consumer" -B "$work/shared" \
    -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release -DFORM=shared \
    -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON \
    -DCMAKE_DISABLE_FIND_PACKAGE_OpenMP=ON \
    -DCMAKE_DISABLE_FIND_PACKAGE_Threads=ON >"$work/shared.log" 2>&1 ||
    { cat "$work/shared.log"; fail "configure"; }
  if grep -q '^CUDA' "$work/shared/CMakeCache.txt"; then
    fail "the consumer's cache has CUDA entries"
  fi
  clean cmake --build "$work/shared" -j2 >>"$work/shared.log" 2>&1 ||
    { cat "$work/shared.log"; fail "build"; }
  clean "$work/shared/consumer_shared"
  clean "$work/shared/consumer_shared" reference
  libdir=$(libdir_of)
  # a plugin backend, loaded from the installed plugin folder
  if [ -f "$libdir/reprise/libreprise-xrt.so" ]; then
    printf '[Runtime]\nruntime_log=null\nverbosity=0\n' >"$work/xrt.ini"
    out=$(clean XRT_INI_PATH="$work/xrt.ini" RP_XRT_EMULATE=1 \
          LD_DEBUG=files "$work/shared/consumer_shared" xrt 2>&1) ||
      { echo "$out" | tail -20; fail "xrt"; }
    echo "$out" | grep -q "calling init: $libdir/reprise/libreprise-xrt.so" ||
      { echo "$out" | tail -20; fail "xrt plugin not from $libdir/reprise"; }
    echo "$out" | grep 'backend xrt: ok'
  fi
  # "auto" takes a backend with a body for the kernel (a CPU one: it has
  # no CUDA body), on a GPU machine too; the cuda plugin, named, loads
  # and refuses the kernel, saying why
  auto_picks_cpu "$work/shared/consumer_shared"
  if [ -f "$libdir/reprise/libreprise-cuda.so" ] && [ $gpu = yes ]; then
    cuda_refuses "$work/shared/consumer_shared"
  fi
  # the installed CLI starts without LD_LIBRARY_PATH (install RPATH)
  clean "$prefix/bin/reprise" --version
  ;;
static)
  libdir=$(libdir_of)
  rm -rf "$work/static"
  clean cmake -S "$src/tests/consumer" -B "$work/static" \
    -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release -DFORM=static \
    >"$work/static.log" 2>&1 || { cat "$work/static.log"; fail "configure"; }
  clean cmake --build "$work/static" -j2 >>"$work/static.log" 2>&1 ||
    { cat "$work/static.log"; fail "build"; }
  # reprise::static needs no vendor library, no libreprise.so
  sh "$src/tests/consumer/static_deps.sh" "$work/static/consumer_static"
  clean "$work/static/consumer_static"
  # a vendor backend not linked in is refused, saying what to link
  out=$(clean "$work/static/consumer_static" xrt 2>&1) &&
    fail "consumer_static ran xrt: $out"
  # (where xrt was built: link its archive; else: not built at all)
  if [ -f "$libdir/libreprise-xrt.a" ]; then
    echo "$out" | grep -q 'not linked into this program: link libreprise-xrt.a' ||
      fail "consumer_static xrt: $out"
  else
    echo "$out" | grep -q 'backend "xrt" is not available: not built' ||
      fail "consumer_static xrt: $out"
  fi
  for p in "$work"/static/consumer_static_*; do
    [ -x "$p" ] || continue
    b=${p##*_}
    ldd "$p" | grep -q 'libreprise\.so' && fail "$p needs libreprise.so"
    case $b in
      xrt)
        printf '[Runtime]\nruntime_log=null\nverbosity=0\n' >"$work/xrt.ini"
        clean XRT_INI_PATH="$work/xrt.ini" RP_XRT_EMULATE=1 "$p" xrt ;;
      starpu) clean STARPU_SILENT=1 STARPU_NCPU=1 "$p" starpu ;;
      cuda) clean "$p" reference      # linked; the GPU may be absent
            auto_picks_cpu "$p"
            if [ $gpu = yes ]; then cuda_refuses "$p"; fi ;;
    esac
  done
  ;;
pkgconfig)
  libdir=$(libdir_of)
  rm -rf "$work/pc"
  mkdir -p "$work/pc"
  pc() { clean PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config "$@"; }
  # shared: starts without LD_LIBRARY_PATH (the .pc carries the run path)
  # shellcheck disable=SC2046
  clean cc -std=c11 -o "$work/pc/pc_shared" "$src/tests/consumer/main.c" \
    $(pc --cflags --libs reprise)
  clean "$work/pc/pc_shared"
  # static: pkg-config --static, the archive named
  # shellcheck disable=SC2046
  clean cc -std=c11 -o "$work/pc/pc_static" "$src/tests/consumer/main.c" \
    $(pc --cflags reprise) \
    $(pc --static --libs reprise | sed 's/-lreprise /-l:libreprise.a /')
  sh "$src/tests/consumer/static_deps.sh" "$work/pc/pc_static"
  clean "$work/pc/pc_static"
  ;;
cxx)
  # the C++ face, header-only: find_package and pkg-config
  libdir=$(libdir_of)
  test -f "$prefix/include/reprise.hpp" || fail "reprise.hpp not installed"
  rm -rf "$work/cxx"
  mkdir -p "$work/cxx"
  clean cmake -S "$src/tests/consumer/cxx" -B "$work/cxx/cmake" \
    -DCMAKE_PREFIX_PATH="$prefix" >"$work/cxx/configure.log" 2>&1 ||
    { cat "$work/cxx/configure.log"; fail "cmake configure"; }
  clean cmake --build "$work/cxx/cmake" >"$work/cxx/build.log" 2>&1 ||
    { cat "$work/cxx/build.log"; fail "cmake build"; }
  clean "$work/cxx/cmake/consumer_cxx"
  # shellcheck disable=SC2046
  clean c++ -std=c++17 -o "$work/cxx/pc_cxx" \
    "$src/tests/consumer/cxx/main.cpp" \
    $(clean PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --cflags --libs \
      reprise)
  clean "$work/cxx/pc_cxx"
  ;;
*) fail "unknown step" ;;
esac
echo "consumer $step: ok ($(($(date +%s) - t0)) s)"
