#!/usr/bin/env bash
# Rewrites the expected outputs of the golden runs (tests/golden/*/) from the
# current code, so that `git diff tests/golden` shows what changed for review.
# Usage: scripts/update-golden.sh [BUILD_DIR]   (default: build)
# Same as: cmake --build BUILD --target podnet cli_test &&
#          (cd BUILD && PODNET_UPDATE_GOLDEN=1 ctest -R Golden)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$build" --target podnet cli_test
(cd "$build" && PODNET_UPDATE_GOLDEN=1 ctest -R Golden --output-on-failure)
echo "podnet: golden outputs rewritten; review them with: git diff --stat tests/golden && git diff tests/golden" >&2
git status --short -- tests/golden >&2
