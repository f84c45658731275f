#!/bin/sh
# A program linked with reprise::static (libreprise.a) needs at run time
# only the C library, libm, OpenMP's runtime and cJSON (docs/install.md):
# no vendor library, not libreprise.so.  usage: static_deps.sh PROGRAM
set -eu
needed=$(ldd "$1" | sed -n 's/^[[:space:]]*\([^ ]*\).*/\1/p')
echo "$1 needs:" $needed
for n in $needed; do
  case $n in
    linux-vdso.so.*|/lib64/ld-linux*|ld-linux*|libc.so.*|libm.so.*) ;;
    libgomp.so.*|libomp.so*|libcjson.so.*) ;;
    libdl.so.*|libpthread.so.*|librt.so.*) ;;  # in libc since glibc 2.34
    *) echo "FAIL: $1 needs $n"; exit 1 ;;
  esac
done
