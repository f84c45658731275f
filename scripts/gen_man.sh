#!/bin/sh
# The manual pages tools/man/*.[137] are written by hand, except the parts
# between the lines
#   .\" BEGIN GENERATED: reprise ARGS
#   .\" END GENERATED
# which this script writes from the tool's own help text (`reprise ARGS`):
# the option list of a command (`help CMD`) as .TP entries, the list of
# commands (`--help`). So the OPTIONS sections never drift from --help
# while the prose around them stays the author's.
#
#   scripts/gen_man.sh TOOL [DIR]           rewrite DIR's pages in place
#   scripts/gen_man.sh --check TOOL [DIR]   fail, with a diff, when a page
#                                           is stale or incomplete
# TOOL is build/tools/reprise, DIR tools/man by default. --check also
# requires a page reprise-CMD.1 for every command of `reprise --help`, with
# the sections NAME, SYNOPSIS, DESCRIPTION, OPTIONS, EXAMPLES, EXIT STATUS
# and SEE ALSO, and an EXIT STATUS entry for every code that the command's
# help names after "Exit status:"; and that groff renders every page
# without a warning. The test man_page_current runs it.
set -eu
check=0
if [ "${1:-}" = --check ]; then
  check=1
  shift
fi
tool=${1:?usage: gen_man.sh [--check] TOOL [DIR]}
dir=${2:-$(dirname "$0")/../tools/man}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# gen ARGS: the generated part for `reprise ARGS`, in roff.
gen() {
  "$tool" "$@" | awk -v cmds="$([ "$1" = --help ] && echo 1 || echo 0)" '
    function esc(s) {              # roff: backslash, minus
      gsub(/\\/, "\\e", s); gsub(/-/, "\\-", s); return s }
    function flag(a,   f, rest, i) {  # "--out FILE" -> \fB\-\-out\fR \fIFILE\fR
      i = match(a, /[ =[]/)
      if (!i) return "\\fB" esc(a) "\\fR"
      f = substr(a, 1, i - 1); rest = substr(a, i)
      if (rest ~ /^\[=/) {
        sub(/^\[=/, "", rest); sub(/\]$/, "", rest)
        return "\\fB" esc(f) "\\fR[=\\fI" esc(rest) "\\fR]"
      }
      sub(/^ /, "", rest)
      return "\\fB" esc(f) "\\fR \\fI" esc(rest) "\\fR"
    }
    function put(   n, alt, i, s) {
      if (spec == "") return
      n = split(spec, alt, /, /)
      s = flag(alt[1])
      for (i = 2; i <= n; i++) s = s ", " flag(alt[i])
      print ".TP"; print s
      if (desc != "") print desc
      spec = ""; desc = ""
    }
    function text(s) {
      s = esc(s); if (s ~ /^[.\047]/) s = "\\&" s; return s }
    cmds == 1 {                    # the list of commands
      if ($0 ~ /^commands:/) { on = 1; next }
      if (on && $0 == "") exit
      if (on) {
        c = $1; $1 = ""; sub(/^ +/, "")
        print ".TP"
        if (c == "help") print "\\fBreprise help\\fR [\\fICOMMAND\\fR]"
        else print ".BR reprise\\-" c " (1)"
        print text($0)
      }
      next
    }
    /^  -/ {                       # an option: "  -o, --out FILE  text"
      put(); started = 1
      line = substr($0, 3)
      i = match(line, /   *[^ ]/)
      if (i) { spec = substr(line, 1, i - 1)
               d = substr(line, i); sub(/^ +/, "", d); desc = text(d) }
      else { spec = line; desc = "" }
      next
    }
    started && /^    / {           # its text, continued
      d = $0; sub(/^ +/, "", d)
      desc = desc (desc == "" ? "" : "\n") text(d); next
    }
    started { put(); exit }
    END { put() }'
}

version=$("$tool" --version | sed 's/^reprise //')

# render PAGE OUT: PAGE with every generated part written anew, and the
# version in its .TH line.
render() {
  : >"$2"
  gen_args=""
  while IFS= read -r line || [ -n "$line" ]; do
    case $line in
      '.TH '*)
        printf '%s\n' "$line" |
          sed "s/\"reprise [^\"]*\"/\"reprise $version\"/" >>"$2" ;;
      '.\" BEGIN GENERATED: reprise '*)
        printf '%s\n' "$line" >>"$2"
        gen_args=${line#*: reprise }
        # shellcheck disable=SC2086
        gen $gen_args >>"$2"
        skip=1 ;;
      '.\" END GENERATED'*)
        printf '%s\n' "$line" >>"$2"
        skip=0 ;;
      *) [ "${skip:-0}" = 1 ] || printf '%s\n' "$line" >>"$2" ;;
    esac
  done <"$1"
}

rc=0
for page in "$dir"/*.[1-8]; do
  out=$tmp/$(basename "$page")
  render "$page" "$out"
  if [ "$check" = 1 ]; then
    if ! diff -u "$page" "$out"; then
      echo "gen_man: $page is stale: run scripts/gen_man.sh $tool" >&2
      rc=1
    fi
  elif ! cmp -s "$page" "$out"; then
    cp "$out" "$page"
    echo "gen_man: wrote $page"
  fi
done

if [ "$check" = 1 ]; then
  cmds=$("$tool" --help | sed -n '/^commands:/,/^$/p' |
         sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p')
  for c in $cmds; do
    [ "$c" = help ] && continue
    page=$dir/reprise-$c.1
    if [ ! -f "$page" ]; then
      echo "gen_man: no page $page for the command '$c'" >&2
      rc=1
      continue
    fi
    grep -qx ".\\\\\" BEGIN GENERATED: reprise help $c" "$page" || {
      echo "gen_man: $page has no generated option list (help $c)" >&2
      rc=1; }
    for s in NAME SYNOPSIS DESCRIPTION OPTIONS EXAMPLES "EXIT STATUS" \
             "SEE ALSO"; do
      grep -qE "^\\.SH \"?$s\"?\$" "$page" || {
        echo "gen_man: $page has no section $s" >&2; rc=1; }
    done
    # every code that the help names after "Exit status:" has an entry
    codes=$("$tool" help "$c" | sed -n '/^Exit status:/,/^$/p' | tr '\n' ' ' |
            sed 's/^Exit status://' | grep -oE '(^|[,:] *) *[0-9]+ ' |
            grep -oE '[0-9]+')
    section=$(sed -n '/^\.SH "\{0,1\}EXIT STATUS/,/^\.SH [A-Z]/p' "$page")
    [ -n "$codes" ] || { echo "gen_man: no exit status in help $c" >&2; rc=1; }
    for n in $codes; do
      printf '%s\n' "$section" | grep -qx "\\.B $n" || {
        echo "gen_man: $page: EXIT STATUS has no entry '.B $n'" >&2; rc=1; }
    done
  done
  # every page renders without a warning (where groff is installed)
  if command -v groff >/dev/null; then
    for page in "$dir"/*.[1-8]; do
      w=$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$page" 2>&1)
      [ -z "$w" ] || { echo "gen_man: groff warns on $page: $w" >&2; rc=1; }
    done
  fi
  [ "$rc" = 0 ] && echo "gen_man: the pages in $dir are current"
fi
exit "$rc"
