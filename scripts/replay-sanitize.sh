#!/usr/bin/env bash
# replay-sanitize.sh [BUILD_DIR] [JOBS]: builds the fuzz corpus replay
# binaries (fuzz/, one per parser a user feeds) and the libraries they link
# with AddressSanitizer and UndefinedBehaviorSanitizer in BUILD_DIR (default
# build-replay; -O1 -g1, cheaper to compile than test-sanitize's -O2 -g),
# and replays every corpus under them (ctest -R fuzz_replay_). Any
# sanitizer report aborts its replay, so this fails.
# `make test` runs it after the test suite: the whole suite under the
# sanitizers (`make test-sanitize`) takes longer than CI allows on 2 cores,
# the corpus replay does not (docs/validation.md, "make test-sanitize").
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-replay}
jobs=${2:-$(nproc 2>/dev/null || echo 2)}
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
  -DPODNET_SANITIZE=ON -DPODNET_BENCH=OFF "${launcher[@]}" >/dev/null
t0=$(date +%s)
cmake --build "$build" -j "$jobs" --target fuzz_all
t1=$(date +%s)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:abort_on_error=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
status=0
(cd "$build" && ctest --output-on-failure -j "$jobs" -R '^fuzz_replay_') || status=$?
t2=$(date +%s)
echo "replay-sanitize: build $((t1 - t0)) s, replay $((t2 - t1)) s, exit $status"
exit $status
