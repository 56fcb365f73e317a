#!/usr/bin/env bash
# test-sanitize.sh [BUILD_DIR] [JOBS]: builds the whole tree with
# AddressSanitizer and UndefinedBehaviorSanitizer (-DPODNET_SANITIZE=ON,
# RelWithDebInfo) in BUILD_DIR (default build-sanitize) and runs the whole
# ctest suite there, the fuzz corpus replay included. Any sanitizer finding
# aborts the test that made it, so the suite fails. Prints the build and test
# times. `make test-sanitize` runs this.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-sanitize}
jobs=${2:-$(nproc 2>/dev/null || echo 2)}
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPODNET_SANITIZE=ON "${launcher[@]}" >/dev/null
t0=$(date +%s)
cmake --build "$build" -j "$jobs"
t1=$(date +%s)
# Leaks are findings too; halt_on_error makes the first report fail its test.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:abort_on_error=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
status=0
(cd "$build" && ctest --output-on-failure -j "$jobs" --timeout 1800) || status=$?
t2=$(date +%s)
echo "test-sanitize: build $((t1 - t0)) s, ctest $((t2 - t1)) s, exit $status"
exit $status
