#!/usr/bin/env bash
# The macOS-paths lane: the owner library, `leash run` and the MCP tests with /proc hidden, so the
# code takes the paths it takes on macOS (no procfs: ps for process groups, signal-0 probes for
# liveness, no environment scans, `leash run` on its process-group fallback).
#
# In a private mount and pid namespace: the namespace's procfs is mounted at /run/leash-realproc
# for the tests' own eyes and for a stand-in `ps` (test/macos/ps.sh, answering as macOS's ps
# does), then an empty tmpfs covers /proc. The shell that is pid 1 there reaps orphans, as launchd
# does; when it exits the kernel ends whatever is left, so nothing outlives the lane.
# Runs the files named in MACOS_PATHS_TESTS (substrings, as scripts/run-tests.mjs takes) or the
# default set below. Where unshare or mount are not permitted it prints SKIP and exits 0: that is
# not a pass.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

DEFAULT_TESTS="test/owner/owner-api test/owner/owner-death test/run/group-fallback-idle test/run/cli.test test/mcp/transport test/mcp/leash-run"
TESTS=${MACOS_PATHS_TESTS:-$DEFAULT_TESTS}

skip() {
  echo "SKIP macos-paths lane: $1 (the macOS-path tests did NOT run)"
  exit 0
}

[ "$(uname -s)" = Linux ] || skip "this lane hides Linux's /proc; on $(uname -s) run the tests themselves"
command -v unshare >/dev/null || skip "no unshare(1)"
[ -f dist/src/index.js ] || { echo "macos-paths lane: build first (npm run build)" >&2; exit 2; }
# The namespaces need root or unprivileged user namespaces with mount rights: try before relying.
if ! unshare --mount --pid --fork sh -c 'mkdir -p /run/leash-realproc && mount -t proc proc /run/leash-realproc && mount -t tmpfs leash-no-proc /proc' 2>/dev/null; then
  skip "unshare --mount --pid or mount is not permitted here"
fi

BIN=$(mktemp -d)
trap 'rm -rf "$BIN"' EXIT
chmod 755 "$BIN"
ln -s "$ROOT/test/macos/ps.sh" "$BIN/ps"

export LEASH_REAL_PROC=/run/leash-realproc
export PATH="$BIN:$PATH"
echo "macos-paths lane: /proc hidden, ps answered from $LEASH_REAL_PROC; tests: $TESTS"
# shellcheck disable=SC2086 # the test list is words on purpose
timeout --kill-after=10 300 unshare --mount --pid --fork sh -c '
  set -e
  mkdir -p /run/leash-realproc
  mount -t proc proc /run/leash-realproc
  mount -t tmpfs -o size=64k,mode=0555 leash-no-proc /proc
  # A lane that saw /proc, or had no ps to ask, would prove nothing: say so and fail.
  if [ -e /proc/self/stat ]; then echo "macos-paths lane: /proc is still visible" >&2; exit 1; fi
  ps -o pgid= -p $$ >/dev/null || { echo "macos-paths lane: the ps stand-in does not answer" >&2; exit 1; }
  # Its own session and group, inside the namespace (the inherited group lives outside it). Not
  # the last command: sh would exec it, and node as pid 1 would leave every orphan a zombie.
  setsid node scripts/run-tests.mjs "$@"
  exit 0
' macos-paths $TESTS
