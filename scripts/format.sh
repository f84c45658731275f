#!/usr/bin/env bash
# The formatting gate (issue 34): every C, C++ and CUDA source the
# repository tracks, formatted with .clang-format.
#   scripts/format.sh [--check]  list the files clang-format would change,
#                                and fail (exit 1) if there is any; the
#                                `format` stage of scripts/test.sh;
#   scripts/format.sh --fix      rewrite them in place. Run it alone, in a
#                                commit of its own that changes nothing
#                                else ("Format the tree with .clang-format"),
#                                after every branch is merged: other work in
#                                flight would otherwise conflict with it.
# RP_CLANG_FORMAT names the binary (default clang-format). Files listed in
# .clang-format-ignore (one git pathspec a line, # comments) are left out.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:---check}
case $mode in
  --check|--fix) ;;
  *) echo "usage: scripts/format.sh [--check|--fix]" >&2; exit 2 ;;
esac
cf=${RP_CLANG_FORMAT:-clang-format}
command -v "$cf" >/dev/null || { echo "format.sh: no $cf" >&2; exit 2; }
excl=()
if [ -f .clang-format-ignore ]; then
  while IFS= read -r l; do
    case $l in ''|'#'*) ;; *) excl+=(":(exclude)$l") ;; esac
  done < .clang-format-ignore
fi
mapfile -t files < <(git ls-files -- '*.c' '*.h' '*.cu' '*.cuh' '*.cpp' \
                       '*.hpp' '*.cc' "${excl[@]}")
if [ "$mode" = --fix ]; then
  printf '%s\0' "${files[@]}" | xargs -0 -n 32 "$cf" -i --style=file
  echo "== format: ${#files[@]} files formatted (review: git diff --stat)"
  exit 0
fi
bad=0
for f in "${files[@]}"; do
  if ! "$cf" --style=file --dry-run -Werror "$f" >/dev/null 2>&1; then
    echo "needs formatting: $f"
    bad=$((bad + 1))
  fi
done
if [ "$bad" -gt 0 ]; then
  echo "== format: $bad of ${#files[@]} files differ from .clang-format" \
       "(scripts/format.sh --fix)"
  exit 1
fi
echo "== format: ${#files[@]} files clean"
