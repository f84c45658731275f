#!/bin/sh
# Install the build tree BUILD into a fresh prefix under WORK, then build and
# run the consumer project against it: with find_package (shared and static
# library) and with pkg-config; and run the installed CLI. Used by ctest
# (test install_consumer).  usage: run.sh BUILD SOURCE WORK
set -eu
build=$1 src=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >"$work/install.log"
libdir=$(sed -n 's/^libdir=//p' "$prefix"/lib*/pkgconfig/reprise.pc)
libdir=$(echo "$libdir" | sed "s|\${prefix}|$prefix|; s|\${exec_prefix}|$prefix|")
test -f "$libdir/cmake/reprise/repriseConfig.cmake"
test -f "$libdir/cmake/reprise/repriseConfigVersion.cmake"

# find_package
cmake -S "$src/tests/consumer" -B "$work/cm" -DCMAKE_PREFIX_PATH="$prefix" \
      -DCMAKE_BUILD_TYPE=Release >"$work/cm.log"
cmake --build "$work/cm" >>"$work/cm.log"
"$work/cm/consumer_shared"
"$work/cm/consumer_static"

# pkg-config: the shared library, then the static one
export PKG_CONFIG_PATH="$libdir/pkgconfig"
cc=${CC:-cc}
$cc -std=c11 -o "$work/pc_shared" "$src/tests/consumer/main.c" \
    $(pkg-config --cflags --libs reprise)
LD_LIBRARY_PATH="$libdir" "$work/pc_shared"
$cc -std=c11 -o "$work/pc_static" "$src/tests/consumer/main.c" \
    $(pkg-config --cflags reprise) \
    $(pkg-config --static --libs reprise | sed 's/-lreprise /-l:libreprise.a /')
if ldd "$work/pc_static" | grep -q libreprise; then
  echo "FAIL: pc_static is linked with the shared library"; exit 1
fi
"$work/pc_static"

# a plugin backend, loaded from the installed plugin folder
if [ -f "$libdir/reprise/libreprise-xrt.so" ]; then
  printf '[Runtime]\nruntime_log=null\nverbosity=0\n' >"$work/xrt.ini"
  out=$(XRT_INI_PATH="$work/xrt.ini" RP_XRT_EMULATE=1 REPRISE_PLUGIN_PATH= \
        LD_DEBUG=files "$work/cm/consumer_shared" xrt 2>&1)
  echo "$out" | grep -q "calling init: $libdir/reprise/libreprise-xrt.so" ||
    { echo "$out" | tail -20; echo "FAIL: xrt plugin not from $libdir/reprise"; exit 1; }
  echo "$out" | grep 'backend xrt: ok'
fi

# the installed CLI starts without LD_LIBRARY_PATH (install RPATH)
"$prefix/bin/reprise" --version
echo "install_consumer: ok"
