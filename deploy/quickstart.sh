#!/usr/bin/env bash
# The first README command: install only what building and running zipper
# needs, build only zipperd, libmmpi and the programs the demo runs, and run
# them across two emulated clusters that reach each other only through zipperd
# (deploy/quickstart.py). ./deploy/run-tests.sh installs and builds the rest.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/deploy/install-deps.sh" --minimal
exec python3 "$root/deploy/quickstart.py"
