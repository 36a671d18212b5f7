#!/usr/bin/env bash
# The second README command: install what is missing, build, run every test.
# Emulated-cluster tests need root and network namespaces; elsewhere they are
# reported as skipped with the reason.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/deploy/install-deps.sh"
"$root/deploy/build.sh"
cd "$root/build"
ctest --output-on-failure --timeout 400 "$@"
