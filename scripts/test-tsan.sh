#!/usr/bin/env bash
# test-tsan.sh [BUILD_DIR] [JOBS]: ThreadSanitizer (-DPODNET_TSAN=ON) on the
# code that runs threads inside one simulation: the flow engine's max-min
# solver re-sorts its lists on a second thread (src/engine/flow/maxmin.hpp,
# "Threads"), the analytical engine compiles routes ahead on its threads
# (src/engine/plan_compiler.hpp, prefetch), and the partitioned packet engine
# runs the fabric's units on lanes (src/engine/packet/partition.hpp). Builds only engine_test (-O1 -g1,
# cheaper to compile) in BUILD_DIR (default build-tsan) and runs its solver,
# flow-simulator and route-compiler tests (ctest -R
# '^(MaxMin|FlowSim|FlowBackend|PlanCompiler|AnalyticalThreads|Partitioned|PlanePackets|Policies/PartitionedPolicy)\.'), among
# them the ones that hand every re-sort to the second thread and compile
# routes on 2 and 4 threads; any data race TSan sees
# fails the test that made it. Run by `make test` (so CI runs it). Prints
# the build and test times.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-tsan}
jobs=${2:-$(nproc 2>/dev/null || echo 2)}
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPODNET_TSAN=ON -DPODNET_BENCH=OFF \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" "${launcher[@]}" >/dev/null
t0=$(date +%s)
cmake --build "$build" -j "$jobs" --target engine_test
t1=$(date +%s)
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:abort_on_error=1:second_deadlock_stack=1}
status=0
(cd "$build" && ctest --output-on-failure -j "$jobs" --timeout 600 -R '^(MaxMin|FlowSim|FlowBackend|PlanCompiler|AnalyticalThreads|Partitioned|PlanePackets|Policies/PartitionedPolicy)\.') || status=$?
t2=$(date +%s)
echo "test-tsan: build $((t1 - t0)) s, ctest $((t2 - t1)) s, exit $status"
exit $status
