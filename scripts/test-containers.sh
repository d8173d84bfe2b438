#!/usr/bin/env bash
# The container lane: servers in containers (test/containers), for real. Installs what it needs
# from Debian's packages when missing (root, apt-get): podman and runc (the runtime), busybox-static
# (the image is built from it, no registry), docker.io only when no `docker` CLI is on the machine
# (the Docker topology is the real docker CLI against `podman system service`). Where they cannot
# be had, the tests print a SKIP line: that is not a pass.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)

missing=()
command -v podman >/dev/null 2>&1 || missing+=(podman)
command -v runc >/dev/null 2>&1 || missing+=(runc)
[ -x /bin/busybox ] && ! od -An -c -N 4096 /bin/busybox | tr -d ' \n' | grep -q ld-linux || missing+=(busybox-static)
command -v docker >/dev/null 2>&1 || missing+=(docker.io)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "test-containers: installing ${missing[*]} (apt-get)"
    export DEBIAN_FRONTEND=noninteractive
    # About 10 s on the project's machines (shared/notes/containers-here.md).
    if ! { apt-get update -qq && apt-get install -y -qq "${missing[@]}"; } >/tmp/leash-containers-apt.log 2>&1; then
      echo "SKIP container lane: apt-get could not install ${missing[*]}:" >&2
      tail -3 /tmp/leash-containers-apt.log >&2 || true
    fi
  else
    echo "SKIP container lane install: ${missing[*]} missing and apt-get needs root here (the tests say SKIP)" >&2
  fi
fi
[ -d dist/test/containers ] || npm run build --silent
node scripts/run-tests.mjs test/containers/
echo "test-containers: $(( $(date +%s) - started )) s, installs included"
