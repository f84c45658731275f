# Sourced on the GPU machine (the device tool), from the repo root:
#   . scripts/device/env.sh
# Unpacks the Debian packages carried in .devdeps/ (cJSON, Criterion,
# StarPU(-MPI), Open MPI, oneTBB, OpenBLAS and their libraries; here:
# `apt-get download` them into .devdeps, which .git/info/exclude ignores,
# and name .devdeps in the call's carry) into the private prefix
# $RP_DEV_PREFIX (default /tmp/P), never into /, and points the compiler,
# CMake, pkg-config, the loader and Open MPI at it
# (../shared/notes/device.md).
P=${RP_DEV_PREFIX:-/tmp/P}
if [ ! -d "$P/usr" ]; then
  mkdir -p "$P"
  for f in .devdeps/*.deb; do dpkg -x "$f" "$P"; done
  for t in mpicc mpirun mpiexec orterun ompi_info; do
    [ -e "$P/usr/bin/$t.openmpi" ] && ln -sf "$t.openmpi" "$P/usr/bin/$t"
  done
  [ -e "$P/usr/bin/mpicc" ] || ln -sf opal_wrapper "$P/usr/bin/mpicc"
  [ -e "$P/usr/bin/mpirun" ] || ln -sf orterun "$P/usr/bin/mpirun"
  # The -dev packages' .so links are absolute (/usr/lib/...): relink them.
  for l in $(find "$P/usr/lib" -type l -name '*.so'); do
    t=$(readlink "$l")
    case $t in /*) ln -sf "$P$t" "$l" ;; esac
  done
  # Their .pc files name /usr: point them into P (a PKG_CONFIG_SYSROOT_DIR
  # would also be put before the paths of reprise's own installed .pc).
  find "$P" -name '*.pc' -exec sed -i "s|=/usr|=$P/usr|g" {} +
fi
A=$P/usr/lib/x86_64-linux-gnu
export OPAL_PREFIX=$P/usr
export PATH=$P/usr/bin:$PATH
export LD_LIBRARY_PATH=$A:$A/openmpi/lib:$A/openblas-pthread${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PKG_CONFIG_LIBDIR=$A/pkgconfig:$P/usr/share/pkgconfig
export CMAKE_PREFIX_PATH=$P/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}
export CPATH=$P/usr/include:$P/usr/include/x86_64-linux-gnu${CPATH:+:$CPATH}
export LIBRARY_PATH=$A:$A/openblas-pthread${LIBRARY_PATH:+:$LIBRARY_PATH}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader
# The consumer tests run in a clean environment (tests/consumer/run.sh):
# keep the paths to the unpacked packages there too.
export RP_CLEAN_KEEP="LD_LIBRARY_PATH LIBRARY_PATH"
