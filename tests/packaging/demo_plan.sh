#!/bin/sh
# scripts/demo.sh builds what it runs and nothing else: the jacobi2d
# example, the static library and, for cuda, its static backend; no test,
# no benchmark, no other example, no other backend.
#   usage: demo_plan.sh SOURCE WORK
set -eu
src=$1 work=$2
rm -rf "$work"
out=$(cd "$src" && env -u RP_BACKEND RP_NO_DEPS=1 RP_DEMO_DIR="$work" \
      RP_DEMO_DRY_RUN=1 scripts/demo.sh)
echo "$out"
backend=$(echo "$out" | sed -n 's/.*\] backend: \([a-z]*\).*/\1/p')
allowed="jacobi2d reprise_static rp_examples rp_obj"
[ "$backend" = cuda ] && allowed="$allowed reprise_static_cuda rp_cuda_obj"
targets=$(echo "$out" | sed -n '/would build:/,$p' | sed -n 's/^  //p')
echo "$targets" | grep -qx jacobi2d || { echo "FAIL: jacobi2d not built"; exit 1; }
for t in $targets; do
  case " $allowed " in
    *" $t "*) ;;
    *) echo "FAIL: the demo ($backend) builds $t"; exit 1 ;;
  esac
done
echo "demo_plan: ok ($(echo $targets | wc -w) targets for $backend)"
