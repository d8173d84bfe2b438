#!/bin/sh
# Installs leash from this clone as a real copy, not a link into the clone (what `npm install -g .`
# makes): builds, packs the package as npm would publish it, and installs that tarball globally.
# Extra arguments go to `npm install`, e.g. --prefix "$HOME/.local" to install without root.
# `leash mcp install` refuses a leash that runs from a git checkout: this gives it a lasting one.
set -eu
cd "$(dirname "$0")/.."
npm ci --no-audit --no-fund
tarball=$(npm pack --silent | tail -n 1)
trap 'rm -f "./$tarball"' EXIT
npm install -g --no-audit --no-fund "./$tarball" "$@"
echo "installed: $(npm prefix -g "$@" 2>/dev/null || true) (run: leash --help)"
