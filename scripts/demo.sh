#!/usr/bin/env bash
# The main job: install what is missing, build what the demo runs, then
# record, analyse and replay the Jacobi 2D example on the best backend
# present (CUDA when a GPU is there, OpenMP otherwise), printing the
# analysis and the theoretical against the achieved speedup. Writes the
# graph's dot, SVG and timeline to out/.
#
# It installs only what it needs (scripts/deps.sh demo: a C compiler,
# CMake, cJSON; Graphviz in the background while it builds, for the
# drawing at the end), builds only the jacobi2d example and the backend it
# runs on, in build-demo/ (tests, benchmarks, other examples and other
# backends off; -O2; Ninja when it is installed), and says what it does,
# step by step, with the seconds elapsed; a second run rebuilds nothing.
# RP_BACKEND=openmp|cuda|xrt|starpu|reference chooses the backend; extra
# arguments go to the example (--help lists them). RP_DEMO_DIR changes the
# build folder; RP_DEMO_DRY_RUN=1 stops after the configure step and lists
# the targets the build would build (the test demo_builds_what_it_runs).
set -euo pipefail
cd "$(dirname "$0")/.."
start=${EPOCHREALTIME/,/.}
step() {    # step MESSAGE: one line, with the seconds since the start
  local now=${EPOCHREALTIME/,/.}
  awk -v a="$now" -v b="$start" -v m="$*" \
    'BEGIN { printf "== demo [%6.1f s] %s\n", a - b, m }'
}

# The backend: RP_BACKEND, else cuda when a GPU and nvcc are there.
gpu=no
if [ -e /dev/nvidia0 ] || { command -v nvidia-smi >/dev/null &&
                            nvidia-smi -L >/dev/null 2>&1; }; then
  gpu=yes
fi
nvcc=${CUDACXX:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
[ -x "$nvcc" ] || nvcc=""
backend=${RP_BACKEND:-auto}
if [ "$backend" = auto ]; then
  if [ $gpu = yes ] && [ -n "$nvcc" ]; then
    backend=cuda
  else
    backend=openmp
  fi
fi
case $backend in
  cuda) why="a GPU is present" ;;
  openmp) why=$([ $gpu = yes ] && echo "GPU present but no nvcc" ||
                echo "no GPU") ;;
  *) why="RP_BACKEND" ;;
esac
step "backend: $backend ($why)"

step "checking the packages the demo needs (scripts/deps.sh demo)"
sets=(demo-build)
[ "$backend" = cuda ] && sets+=(cxx)   # nvcc's host compiler
# the vendor backends' packages are in the full set
case $backend in xrt|starpu) sets=(all) ;; esac
scripts/deps.sh "${sets[@]}"
# Graphviz is needed only at the end: installed while the build runs.
draw_pid=""
if [ "${RP_DEMO_DRY_RUN:-0}" != 1 ] && ! command -v dot >/dev/null; then
  mkdir -p out
  scripts/deps.sh demo-draw >out/deps-draw.log 2>&1 &
  draw_pid=$!
  # A failure below must not leave apt running (holding its lock) after
  # the script has exited: the exit waits for the install.
  trap '[ -z "$draw_pid" ] || wait "$draw_pid" 2>/dev/null || true' EXIT
  step "installing Graphviz in the background (out/deps-draw.log)"
fi
on() { [ "$backend" = "$1" ] && echo ON || echo OFF; }
# -O2, not Release's -O3: 4 % less compile time on this build.
config=(-DCMAKE_BUILD_TYPE=Release "-DCMAKE_C_FLAGS_RELEASE=-O2 -DNDEBUG"
        -DRP_BUILD_TESTS=OFF -DRP_BUILD_BENCH=OFF
        -DRP_BUILD_EXAMPLES=ON -DRP_EXAMPLES=jacobi2d -DRP_WITH_CXX=OFF
        -DRP_WITH_CUDA="$(on cuda)"
        -DRP_WITH_XRT="$(on xrt)" -DRP_WITH_STARPU="$(on starpu)"
        -DRP_WITH_MPI=OFF)
# Ninja when installed (8 % less CPU than make's recursive Makefiles on
# this build); not worth installing for one build.
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)

# Configure once per set of options (a later build re-runs CMake by itself
# when a CMakeLists.txt changes).
dir=${RP_DEMO_DIR:-build-demo}
mkdir -p "$dir"
if [ ! -f "$dir/CMakeCache.txt" ] ||
   [ "$(cat "$dir/demo.config" 2>/dev/null)" != "${config[*]}" ]; then
  step "configuring $dir (${config[*]})"
  # a folder configured before with another generator starts afresh
  if [ -f "$dir/CMakeCache.txt" ]; then
    rm -rf "$dir/CMakeCache.txt" "$dir/CMakeFiles"
  fi
  cmake -S . -B "$dir" "${gen[@]}" "${config[@]}" >"$dir/configure.log" 2>&1 ||
    { cat "$dir/configure.log"; exit 1; }
  echo "${config[*]}" >"$dir/demo.config"
  grep -E "reprise backends" "$dir/configure.log" || true
else
  step "$dir is configured"
fi

if [ "${RP_DEMO_DRY_RUN:-0}" = 1 ]; then
  # the targets jacobi2d depends on (CMake's graph of targets; the
  # shapes of targets this project builds)
  cmake --graphviz="$dir/targets/t.dot" "$dir" >/dev/null
  step "would build:"
  sed -n 's/.*label = "\([^"]*\)", shape = \(egg\|octagon\|doubleoctagon\|tripleoctagon\|hexagon\) .*/\1/p' \
    "$dir/targets/t.dot.jacobi2d" | sort -u | sed 's/^/  /'
  exit 0
fi

# The example links the static library, which has the chosen backend.
step "building the jacobi2d example and the $backend backend"
cmake --build "$dir" -j"$(nproc)" --target jacobi2d

mkdir -p out
step "running: record, analyse and replay Jacobi 2D on $backend"
RP_BACKEND=$backend "$dir/examples/jacobi2d" --backend "$backend" \
  --dot out/jacobi2d.dot --trace out/jacobi2d.trace.json "$@"
if [ -n "$draw_pid" ]; then
  step "waiting for the Graphviz install"
  wait "$draw_pid" || echo "(Graphviz could not be installed:" \
                           "out/deps-draw.log; out/jacobi2d.dot stays undrawn)"
  draw_pid=""
fi
if command -v dot >/dev/null; then
  step "drawing the graph (dot -Tsvg)"
  dot -Tsvg out/jacobi2d.dot -o out/jacobi2d.svg
fi
echo
step "done. graph: out/jacobi2d.dot (and .svg); timeline:" \
     "out/jacobi2d.trace.json (open it in https://ui.perfetto.dev)"
