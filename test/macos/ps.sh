#!/bin/sh
# A stand-in for macOS's ps(1), for the lane that hides /proc (scripts/test-macos-paths.sh).
# Linux's own ps reads /proc, which that lane covers with an empty tmpfs; this one reads the real
# procfs where the lane mounted it (LEASH_REAL_PROC) and answers as macOS's ps does for what leash
# asks: `ps -o FIELDS -p PID[,PID...]`, FIELDS among pid ppid pgid sess stat state comm command
# args, each `name=` for no header (a header row is printed unless every field has one). Numbers
# are right-aligned to 5 columns; a zombie's command is <defunct>; exit 1 when no pid was found.
# Shell builtins only, so it costs what macOS's ps costs, not a Node start.
root=${LEASH_REAL_PROC:-/run/leash-realproc}
fields='' pids=''
while [ $# -gt 0 ]; do
  case $1 in
    -o) fields="$fields $(echo "$2" | tr ',' ' ')"; shift 2 ;;
    -p) pids="$pids $(echo "$2" | tr ',' ' ')"; shift 2 ;;
    -ww|-w) shift ;;
    *) echo "ps (macOS stand-in): unsupported option $1" >&2; exit 2 ;;
  esac
done
[ -n "$fields" ] || fields='pid stat command'
[ -n "$pids" ] || { echo "ps (macOS stand-in): -p PID is required" >&2; exit 2; }
header='' bare=1
for field in $fields; do
  case $field in *=) ;; *) bare=0 ;; esac
  name=${field%%=*}
  case $name in pid|ppid|pgid|sess|stat|state|comm|command|args) ;;
    *) echo "ps (macOS stand-in): unsupported field $name" >&2; exit 2 ;; esac
  header="$header${header:+ }$(echo "$name" | tr a-z A-Z)"
done
[ $bare = 1 ] || echo "$header"
found=1
for pid in $pids; do
  line=''
  read -r line 2>/dev/null < "$root/$pid/stat" || continue
  [ -n "$line" ] || continue
  found=0
  comm=${line#*(}; comm=${comm%)*}
  # shellcheck disable=SC2086 # the stat fields after the command name, as words
  set -- ${line##*) }
  state=$1 ppid=$2 pgid=$3 sess=$4
  command=$(tr '\0' ' ' < "$root/$pid/cmdline" 2>/dev/null); command=${command% }
  [ -n "$command" ] || command="($comm)"
  [ "$state" != Z ] || command='<defunct>'
  row=''
  for field in $fields; do
    case ${field%%=*} in
      pid) value=$(printf '%5s' "$pid") ;;
      ppid) value=$(printf '%5s' "$ppid") ;;
      pgid) value=$(printf '%5s' "$pgid") ;;
      sess) value=$(printf '%5s' "$sess") ;;
      stat|state) value=$state ;;
      comm) value=$comm ;;
      command|args) value=$command ;;
    esac
    row="$row${row:+ }$value"
  done
  echo "$row"
done
exit $found
