# Spack recipe for reprise (docs/install.md, "Spack").
#
# reprise is not published yet: build the tree you have, with
#   spack repo add packaging/spack            # Spack < 1.0: this folder is
#                                             # a repository (repo.yaml)
#   spack develop --path "$PWD" reprise@=0.1.0
#   spack install reprise +cuda cuda_arch=90
# (with Spack 1.x, copy this file into a repository made by
# `spack repo create`). scripts/check_spack.sh checks, in CI, that every
# CMake option this recipe passes exists in CMakeLists.txt, that every
# RP_WITH_* option has a variant, and that CMake accepts the arguments.
#
# SPDX-License-Identifier: MIT

from spack.package import *

try:  # Spack >= 1.0: the build systems live in the builtin repository
    from spack_repo.builtin.build_systems.cmake import CMakePackage
    from spack_repo.builtin.build_systems.cuda import CudaPackage
except ImportError:  # Spack < 1.0: in spack.package
    pass


class Reprise(CMakePackage, CudaPackage):
    """Record once, replay many: a C11 library and command-line tool for
    iterative solvers on accelerators. A program records one step (kernel
    launches over buffers, copies, host tasks) into a graph; reprise derives
    the data hazards, inserts missing transfers, analyses the overlap to win
    (critical path, lanes, speedup bound) and replays the graph on CPU cores
    (OpenMP), as a CUDA graph, through Xilinx XRT or over StarPU(-MPI)."""

    homepage = "https://example.invalid/reprise"  # not published yet
    license("MIT")

    version("0.1.0")

    variant("openmp", default=True,
            description="openmp backend: replay on CPU cores (built in)")
    # +cuda and cuda_arch come from CudaPackage: the cuda backend (a plugin
    # of the shared library) and the examples' CUDA kernels.
    variant("xrt", default=False,
            description="xrt backend for FPGAs (plugin); XRT is found in "
            "$XILINX_XRT or /opt/xilinx/xrt")
    variant("starpu", default=False,
            description="starpu backend (plugin), StarPU 1.3")
    variant("mpi", default=False,
            description="distributed replay over MPI: the mpi backend "
            "(plugin) and, with +starpu, the starpu backend's distributed "
            "mode (StarPU-MPI)")
    # Criterion is no Spack package: +tests takes it from the system (an
    # external); without it CMake says so and builds no test.
    variant("tests", default=False,
            description="build the Criterion test suite (ctest)")
    variant("examples", default=False, description="build the examples")
    variant("cxx", default=True,
            description="the C++ example and tests of include/reprise.hpp "
            "(the header itself is always installed)")

    depends_on("c", type="build")
    depends_on("cxx", type="build", when="+cxx")
    depends_on("cmake@3.18:", type="build")
    depends_on("pkgconfig", type="build")
    depends_on("cjson")
    depends_on("starpu@1.3~mpi", when="+starpu~mpi")
    depends_on("starpu@1.3+mpi", when="+starpu+mpi")
    depends_on("mpi", when="+mpi")
    depends_on("uuid", when="+xrt")
    depends_on("graphviz", type="test", when="+tests")

    def cmake_args(self):
        spec = self.spec

        def on(flag):
            return "ON" if spec.satisfies(flag) else "OFF"

        # Every backend ON or OFF, never AUTO: what Spack builds is what
        # the spec says.
        args = [
            self.define("RP_WITH_OPENMP", on("+openmp")),
            self.define("RP_WITH_CUDA", on("+cuda")),
            self.define("RP_WITH_XRT", on("+xrt")),
            self.define("RP_WITH_STARPU", on("+starpu")),
            self.define("RP_WITH_MPI", on("+mpi")),
            self.define_from_variant("RP_BUILD_TESTS", "tests"),
            self.define_from_variant("RP_BUILD_EXAMPLES", "examples"),
            self.define_from_variant("RP_WITH_CXX", "cxx"),
            self.define("RP_BUILD_BENCH", False),
            self.define("RP_WERROR", False),
        ]
        if spec.satisfies("+cuda"):
            archs = spec.variants["cuda_arch"].value
            if archs and "none" not in archs:
                args.append(self.define("CMAKE_CUDA_ARCHITECTURES", ";".join(archs)))
            args.append(self.define("CMAKE_CUDA_COMPILER", spec["cuda"].prefix.bin.nvcc))
        return args
