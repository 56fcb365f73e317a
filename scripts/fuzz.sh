#!/usr/bin/env bash
# fuzz.sh [BUILD_DIR] [SECONDS] [TARGET...]: runs each libFuzzer target (built
# with -DPODNET_FUZZ=ON, see `make fuzz`) for SECONDS (default 60), or until
# FUZZ_RUNS executions when that is set (-runs=N, SECONDS still caps it), on a
# working copy of its corpus (tests/fuzz/<target>/ plus the repository inputs
# the replay tests use), with ASan and UBSan. Prints each target's executions,
# exec/s, wall seconds, corpus size after the run and findings; a crashing
# input is saved as BUILD_DIR/fuzz-crashes/<target>-* and the script exits 1.
# To keep a fixed crash fixed, copy its input into tests/fuzz/<target>/ (ctest
# replays the corpus on every run).
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-fuzz}
seconds=${2:-60}
shift 2 2>/dev/null || shift $#
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(scenario units gpu_list simai_workload simai_topology nccl_tests_log sweep_axis chakra_trace probe_csv
  result_document)
declare -A extra=([scenario]=examples [simai_workload]=tests/data/simai [simai_topology]=tests/data/simai
                  [nccl_tests_log]=tests/data/nccl-tests [chakra_trace]=tests/data/chakra)
mkdir -p "$build/fuzz-crashes"
status=0
runs=()
[ -n "${FUZZ_RUNS:-}" ] && runs=(-runs="$FUZZ_RUNS")
printf '%-16s %12s %10s %8s %8s %8s  %s\n' target executions exec/s wall_s corpus crashes note
for t in "${targets[@]}"; do
  bin="$build/fuzz/fuzz_$t"
  [ -x "$bin" ] || { echo "fuzz: $bin not built (make fuzz builds it)" >&2; exit 2; }
  work="$build/fuzz-corpus/$t"
  mkdir -p "$work"
  cp -n tests/fuzz/"$t"/* "$work"/ 2>/dev/null
  [ -n "${extra[$t]:-}" ] && cp -n "${extra[$t]}"/* "$work"/ 2>/dev/null
  log="$build/fuzz-$t.log"
  t0=$(date +%s)
  "$bin" "$work" "${runs[@]}" -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=2048 -timeout=20 -print_final_stats=1 \
    -artifact_prefix="$build/fuzz-crashes/$t-" >"$log" 2>&1
  rc=$?
  wall=$(($(date +%s) - t0))
  execs=$(grep -m1 'stat::number_of_executed_units' "$log" | awk '{print $2}')
  rate=$(grep -m1 'stat::average_exec_per_sec' "$log" | awk '{print $2}')
  crashes=$(ls "$build/fuzz-crashes/$t-"* 2>/dev/null | wc -l)
  note=""
  if [ $rc -ne 0 ]; then status=1; note="FOUND: $(grep -m1 -E 'ERROR|runtime error|terminate|deadly signal' "$log")"; fi
  printf '%-16s %12s %10s %8s %8s %8s  %s\n' "$t" "${execs:-?}" "${rate:-?}" "$wall" "$(ls "$work" | wc -l)" "$crashes" \
    "$note"
done
exit $status
