#!/bin/sh
# The core library needs only libc, libm, pthreads, OpenMP and cJSON; the
# plugins carry the vendor libraries. usage: check_core_deps.sh LIB [PLUGIN..]
set -eu
lib=$1
shift
needed=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
echo "$lib needs:" $needed
for n in $needed; do
  case $n in
    libc.so.*|libm.so.*|libpthread.so.*|libgomp.so.*|libomp.so*|libcjson.so.*|libdl.so.*|ld-linux*) ;;
    libasan.so.*|libubsan.so.*|libstdc++.so.*|libgcc_s.so.*) ;;  # sanitizer builds
    *) echo "FAIL: $lib needs $n"; exit 1 ;;
  esac
done
if ldd "$lib" | grep -Ei 'cuda|xrt|nvidia|uuid|starpu|mpi'; then
  echo "FAIL: ldd $lib shows a vendor library"
  exit 1
fi
for p in "$@"; do    # each plugin names its vendor library and the core
  pn=$(readelf -d "$p" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  echo "$p needs:" $pn
  echo "$pn" | grep -q 'libreprise\.so' || { echo "FAIL: $p"; exit 1; }
  echo "$pn" | grep -Eq 'cuda|xrt|starpu|mpi' ||
    { echo "FAIL: $p needs no vendor library"; exit 1; }
done
echo ok
