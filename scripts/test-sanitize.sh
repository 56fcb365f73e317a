#!/usr/bin/env bash
# test-sanitize.sh [--replay] [BUILD_DIR] [JOBS]: AddressSanitizer and
# UndefinedBehaviorSanitizer (-DPODNET_SANITIZE=ON). Any sanitizer finding
# (leaks included) aborts the test that made it, so the run fails. Prints
# the build and test times.
# - Default (`make test-sanitize`): builds the whole tree, tests included
#   (RelWithDebInfo), in BUILD_DIR (default build-sanitize) and runs the
#   whole ctest suite there, the fuzz corpus replay included.
# - --replay (the end of `make test`, so CI runs it): builds only the fuzz
#   corpus replay binaries (fuzz/, one per parser a user feeds) and the
#   libraries they link, at -O0 -g1 (the cheapest to compile: the replay itself takes seconds), in BUILD_DIR
#   (default build-replay), and replays every corpus (ctest -R
#   fuzz_replay_). The whole suite under the sanitizers takes longer than CI
#   allows on 2 cores, the replay does not (docs/contributing/validation/hardening.md, "make
#   test-sanitize").
set -euo pipefail
cd "$(dirname "$0")/.."
replay=0
[ "${1:-}" = --replay ] && { replay=1; shift; }
if [ $replay = 1 ]; then
  build=${1:-build-replay}
  config=(-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O0 -g1" -DPODNET_BENCH=OFF)
  target=(--target fuzz_all)
  tests=(-R '^fuzz_replay_')
  name=replay-sanitize
else
  build=${1:-build-sanitize}
  config=()
  target=()
  tests=()
  name=test-sanitize
fi
jobs=${2:-$(nproc 2>/dev/null || echo 2)}
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPODNET_SANITIZE=ON "${config[@]}" "${launcher[@]}" \
  >/dev/null
t0=$(date +%s)
cmake --build "$build" -j "$jobs" "${target[@]}"
t1=$(date +%s)
# Leaks are findings too; halt_on_error makes the first report fail its test.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:abort_on_error=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
status=0
(cd "$build" && ctest --output-on-failure -j "$jobs" --timeout 1800 "${tests[@]}") || status=$?
t2=$(date +%s)
echo "$name: build $((t1 - t0)) s, ctest $((t2 - t1)) s, exit $status"
exit $status
