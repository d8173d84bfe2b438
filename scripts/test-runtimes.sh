#!/usr/bin/env bash
# The Bun and Deno lanes: leash's owner library (spawnOwned, owner SIGKILLed -> group gone) and
# proc-leash/mcp with the real SDK (connect, close, whole server tree gone), each run BY Bun and BY
# Deno (test/package/runtimes.test.ts). Both runtimes are installed as npm packages (`bun`,
# `deno`, pinned below) into a cache outside the repository, never fetched from anywhere else.
# A runtime that cannot be installed or does not run prints a SKIP line and its lane does not run:
# that is not a pass.
set -euo pipefail
cd "$(dirname "$0")/.."

BUN_VERSION=1.4.5
DENO_VERSION=2.9.6
CACHE="${LEASH_RUNTIMES_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/leash-runtimes}"

mkdir -p "$CACHE"
# The binaries come in each package's platform dependency (@oven/bun-<platform>, @deno/<platform>).
# Install scripts are not run (they only copy the binary into place, and could fetch from elsewhere
# on platforms without such a package): the first candidate that answers --version is used.
install_runtime() { # name version -> prints the binary's path, or nothing
  local name=$1 version=$2 dir="$CACHE/$1-$2"
  if [ ! -d "$dir/node_modules/$name" ]; then
    rm -rf "$dir" && mkdir -p "$dir"
    if ! npm install --prefix "$dir" --no-audit --no-fund --no-save --ignore-scripts --fetch-retries=1 --fetch-timeout=60000 "$name@$version" >"$dir.log" 2>&1 </dev/null; then
      tail -3 "$dir.log" >&2 || true
      return 0
    fi
  fi
  local candidate
  # The platform binary first: `.bin/deno` is a Node script that runs the binary as its child, so a
  # test that SIGKILLs "the Deno owner" would kill that wrapper and leave the real owner running.
  for candidate in "$dir"/node_modules/@oven/bun-*/bin/bun "$dir"/node_modules/@deno/*/deno "$dir/node_modules/.bin/$name"; do
    if [ -x "$candidate" ] && "$candidate" --version >/dev/null 2>&1 </dev/null; then
      echo "$candidate"
      return 0
    fi
  done
}

BUN=$(install_runtime bun "$BUN_VERSION")
DENO=$(install_runtime deno "$DENO_VERSION")
[ -n "$BUN" ] || echo "SKIP bun lane: bun@$BUN_VERSION could not be installed from npm or does not run here (the Bun tests did NOT run)"
[ -n "$DENO" ] || echo "SKIP deno lane: deno@$DENO_VERSION could not be installed from npm or does not run here (the Deno tests did NOT run)"
[ -n "$BUN$DENO" ] || exit 0

npm run build --silent
echo "runtimes lane: ${BUN:+bun $("$BUN" --version) }${DENO:+deno $("$DENO" --version | head -1 | cut -d' ' -f2)}"
LEASH_TEST_BUN="$BUN" LEASH_TEST_DENO="$DENO" node scripts/run-tests.mjs test/package/runtimes
