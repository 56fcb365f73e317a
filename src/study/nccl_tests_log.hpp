// nccl-tests text output, read: the logs of real runs that `podnet
// calibrate` fits the scenario to (study/calibrate.hpp). Writing podnet's own
// bench result in the same layout is report/nccl_tests.hpp.
//
// The format is the one NVIDIA/nccl-tests prints (src/common.cu and
// src/util.cu, versions 2.0 to 2.19):
//
//   # nccl-tests version 2.19.6 nccl-headers=22803 nccl-library=22803      (2.17+)
//   # Collective test starting: all_reduce_perf                            (2.15+)
//   # nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 ...
//   #
//   # Using devices
//   #  Rank  0 Group  0 Pid  12345 on   node-a device  0 [0000:18:00] NVIDIA H100 80GB HBM3
//   ...                          (one line per rank; MPI runs gather every process's lines)
//   #
//   #                                                              out-of-place                       in-place
//   #       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw
//   #wrong #        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)
//   (GB/s)
//            8             2     float     sum      -1    33.30    0.00    0.00       0    31.51    0.00    0.00 0
//   ...
//   # Out of bounds values : 0 OK
//   # Avg bus bandwidth    : 41.3015
//
// Variations handled: the column header names the columns, so a log with no
// `root` column (2.9-2.12 alltoall, and most tests before 2.13: "size count
// type redop"), `error` instead of `#wrong` (before 2.13), `cputime` instead
// of `time` (-C 1), the per-iteration columns (-I 1: i_min i_max i_p99 i_cv%
// after each block), a trailing timestamp column (-T), `N/A` or `0e+00` in
// the error column, numbers that overflow their width (`1.2e+03`), and a
// data line without its out-of-place block (trace replay) are all read, and
// so are lines prefixed by the launcher (srun --label "0: ", mpirun
// --tag-output "[1,0]<stdout>:").
// Rank lines with or without `Group` (before 2.13) are read; the host names
// give the server layout (ranks per host). Lines that are neither comments
// nor results (NCCL_DEBUG=INFO output, mpirun warnings, the shell prompt)
// are skipped; a line that starts with a number inside a results table and
// cannot be read is an InputError "FILE:LINE: ...".
//
// The algorithm and protocol NCCL was held to, when the log says: an
// `NCCL_ALGO=...` / `NCCL_PROTO=...` on any line (`export NCCL_ALGO=RING`,
// `mpirun -x NCCL_ALGO=Ring ...`, `NCCL_ALGO=Ring ./all_reduce_perf ...`) or
// NCCL's own "NCCL INFO NCCL_ALGO set by environment to Ring" (NCCL_DEBUG=INFO),
// before a results table, applies to that table and those after it.
//
// The collective is the test program's name ("# Collective test starting:
// all_reduce_perf", or any `<op>_perf` on a line of the log such as the
// command line); "" when the log does not say. One file may hold several
// tests one after another: each results table is one NcclTestsLog.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace podnet::study {

struct NcclTestsRank {
  int rank = 0;
  int group = 0;
  int pid = 0;
  std::string host;
  int device = 0;
  std::string device_name;  // "NVIDIA H100 80GB HBM3"
  int line = 0;
};

// One block of results ("out-of-place" or "in-place"); present = false
// when the log left it out.
struct NcclTestsResult {
  bool present = false;
  double time_us = 0;
  double algbw_gbyte_per_s = 0;  // GB/s = 1e9 bytes/s
  double busbw_gbyte_per_s = 0;
  // The `#wrong` column (2.13+): values the data check found wrong at this
  // size; -1 when not checked (`N/A`, `-c 0`) or when the log has no such
  // column (before 2.13 it printed `error`, a largest deviation, not read).
  int64_t wrong = -1;
};

struct NcclTestsRow {
  int64_t bytes = 0;
  int64_t count = 0;
  std::string type;   // "float"
  std::string redop;  // "sum", "none", "" when the log has no redop column
  int64_t root = -1;
  NcclTestsResult out_of_place, in_place;
  int line = 0;
  // The out-of-place block when present, else the in-place one.
  const NcclTestsResult& result() const { return out_of_place.present ? out_of_place : in_place; }
};

struct NcclTestsLog {
  std::string source;  // the file
  int line = 0;        // line of the column header
  std::string test;    // "all_reduce", "all_gather", ... (the program name without _perf); "" if unknown
  int threads = 0;     // "# nThread N nGpus M": 0 when the log has no such line
  int gpus_per_thread = 0;
  std::vector<NcclTestsRank> ranks;
  std::vector<NcclTestsRow> rows;
  double avg_busbw_gbyte_per_s = -1;  // "# Avg bus bandwidth", -1 if absent
  // NCCL_ALGO / NCCL_PROTO as the log gives them ("RING", "Ring,Tree", "^NVLS"); "" when it does not say.
  std::string nccl_algo, nccl_proto;
  int nccl_algo_line = 0, nccl_proto_line = 0;  // where the log said so (0: nowhere)

  // Ranks: the Rank lines, else threads x gpus_per_thread (one process), else 0.
  int nranks() const;
  // Distinct host names in order of first appearance (1 when there are no Rank lines).
  std::vector<std::string> hosts() const;
  // Ranks on each host when every host has the same number; 0 otherwise.
  int ranks_per_host() const;
};

// Parses the text of one file. InputError "SOURCE:LINE: ..." for a results
// line that cannot be read, "SOURCE: ..." for a file with no results table.
std::vector<NcclTestsLog> parse_nccl_tests(const std::string& text, const std::string& source);
// The longest time a row may give (3.6e9 us: an hour per collective); a longer one is refused.
inline constexpr double kMaxLogTimeUs = 3.6e9;
// Reads and parses a file (InputError if it cannot be read).
std::vector<NcclTestsLog> read_nccl_tests(const std::string& path);

}  // namespace podnet::study
