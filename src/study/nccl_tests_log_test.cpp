#include "study/nccl_tests_log.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "core/error.hpp"

namespace podnet::study {
namespace {

// nccl-tests 2.19 layout (src/util.cu), one process, two GPUs on one host.
const char* kModern = R"(# nccl-tests version 2.19.6 nccl-headers=22803 nccl-library=22803
# Collective test starting: all_reduce_perf
# nThread 1 nGpus 2 minBytes 8 maxBytes 1048576 step: 1024(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0 unalign: 0
#
# Using devices
#  Rank  0 Group  0 Pid  41187 on    dgx-a01 device  0 [0000:18:00] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid  41187 on    dgx-a01 device  1 [0000:2a:00] NVIDIA H100 80GB HBM3
#
#                                                              out-of-place                       in-place          
#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong 
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)         
           8             2     float     sum      -1    10.00    0.00    0.00       0     9.50    0.00    0.00       0
        8192          2048     float     sum      -1    12.50    0.66    0.66       0    12.00    0.68    0.68       0
     8388608       2097152     float     sum      -1   1.2e+03    6.99    6.99     N/A    100.00   83.89   83.89     N/A
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 15.3167 
#
# Collective test concluded: all_reduce_perf
)";

TEST(NcclTests, ReadsTheModernLayout) {
  const auto logs = parse_nccl_tests(kModern, "a.log");
  ASSERT_EQ(logs.size(), 1u);
  const NcclTestsLog& l = logs[0];
  EXPECT_EQ(l.test, "all_reduce");
  EXPECT_EQ(l.threads, 1);
  EXPECT_EQ(l.gpus_per_thread, 2);
  EXPECT_EQ(l.nranks(), 2);
  ASSERT_EQ(l.hosts().size(), 1u);
  EXPECT_EQ(l.hosts()[0], "dgx-a01");
  EXPECT_EQ(l.ranks_per_host(), 2);
  EXPECT_EQ(l.ranks[1].device, 1);
  EXPECT_EQ(l.ranks[1].device_name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(l.line, 10);
  ASSERT_EQ(l.rows.size(), 3u);
  EXPECT_EQ(l.rows[0].bytes, 8);
  EXPECT_EQ(l.rows[0].count, 2);
  EXPECT_EQ(l.rows[0].type, "float");
  EXPECT_EQ(l.rows[0].redop, "sum");
  EXPECT_EQ(l.rows[0].root, -1);
  EXPECT_DOUBLE_EQ(l.rows[0].out_of_place.time_us, 10.0);
  EXPECT_DOUBLE_EQ(l.rows[0].in_place.time_us, 9.5);
  EXPECT_DOUBLE_EQ(l.rows[1].out_of_place.busbw_gbyte_per_s, 0.66);
  // A number wider than its column is printed in exponent form; N/A in #wrong is read past.
  EXPECT_DOUBLE_EQ(l.rows[2].out_of_place.time_us, 1200.0);
  EXPECT_DOUBLE_EQ(l.rows[2].in_place.busbw_gbyte_per_s, 83.89);
  EXPECT_EQ(l.rows[2].line, 14);
  EXPECT_DOUBLE_EQ(l.avg_busbw_gbyte_per_s, 15.3167);
  // #wrong: 0 where the data check passed, -1 for N/A (not checked).
  EXPECT_EQ(l.rows[0].out_of_place.wrong, 0);
  EXPECT_EQ(l.rows[1].in_place.wrong, 0);
  EXPECT_EQ(l.rows[2].out_of_place.wrong, -1);
  EXPECT_EQ(l.rows[2].in_place.wrong, -1);
}

// nccl-tests 2.9-2.12 alltoall (no root column, `error` as %5.0le), launched
// with mpirun: 4 processes on 2 hosts, Rank lines without Group, NCCL INFO
// lines and the command line in between; the test is named by the command.
const char* kOldMpi = R"(+ mpirun -np 4 -H node1:2,node2:2 ./build/alltoall_perf -b 1M -e 4M -f 2 -g 1
# nThread 1 nGpus 1 minBytes 1048576 maxBytes 4194304 step: 2(factor) warmup iters: 5 iters: 20 validation: 1
#
# Using devices
#   Rank  0 Pid  1001 on      node1 device  0 [0x07] Tesla V100-SXM2-32GB
#   Rank  1 Pid  1002 on      node1 device  1 [0x0a] Tesla V100-SXM2-32GB
#   Rank  2 Pid  2001 on      node2 device  0 [0x07] Tesla V100-SXM2-32GB
#   Rank  3 Pid  2002 on      node2 device  1 [0x0a] Tesla V100-SXM2-32GB
node1:1001:1001 [0] NCCL INFO Bootstrap : Using ib0:10.0.0.1<0>
node1:1001:1001 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.1<0>
#
#                                             out-of-place                       in-place          
#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error
#        (B)    (elements)                     (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       
     1048576         65536   float    none    200.0    5.24    3.93  0e+00    201.0    5.22    3.91  0e+00
node2:2001:2001 [0] NCCL INFO comm 0x55 rank 2 nranks 4 cudaDev 0 busId 7000 - Destroy COMPLETE
     2097152        131072   float    none    380.0    5.52    4.14  0e+00    381.0    5.50    4.13  0e+00
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 4.0275 
)";

TEST(NcclTests, ReadsOldMpiLogsWithoutRootColumn) {
  const auto logs = parse_nccl_tests(kOldMpi, "b.log");
  ASSERT_EQ(logs.size(), 1u);
  const NcclTestsLog& l = logs[0];
  EXPECT_EQ(l.test, "alltoall");
  EXPECT_EQ(l.nranks(), 4);  // the Rank lines, not nThread x nGpus (1 per process)
  ASSERT_EQ(l.hosts().size(), 2u);
  EXPECT_EQ(l.hosts()[1], "node2");
  EXPECT_EQ(l.ranks_per_host(), 2);
  EXPECT_EQ(l.ranks[3].pid, 2002);
  ASSERT_EQ(l.rows.size(), 2u);
  EXPECT_EQ(l.rows[1].count, 131072);
  EXPECT_EQ(l.rows[1].redop, "none");
  EXPECT_EQ(l.rows[1].root, -1);  // no root column
  EXPECT_DOUBLE_EQ(l.rows[1].out_of_place.time_us, 380.0);
  EXPECT_DOUBLE_EQ(l.rows[1].out_of_place.busbw_gbyte_per_s, 4.14);
  EXPECT_DOUBLE_EQ(l.rows[1].in_place.algbw_gbyte_per_s, 5.50);
}

TEST(NcclTests, ReadsWrongValueCounts) {
  // A broken run: 3 wrong values out-of-place at 8 KiB; a log's `error` column (before 2.13) is not a count.
  std::string text = kModern;
  const std::string good = "    12.50    0.66    0.66       0    12.00";
  const auto at = text.find(good);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, good.size(), "    12.50    0.66    0.66       3    12.00");
  const auto logs = parse_nccl_tests(text, "a.log");
  EXPECT_EQ(logs[0].rows[1].out_of_place.wrong, 3);
  EXPECT_EQ(logs[0].rows[1].in_place.wrong, 0);
  const auto old = parse_nccl_tests(kOldMpi, "b.log");
  EXPECT_EQ(old[0].rows[0].out_of_place.wrong, -1);
  // Neither a count nor N/A: an error naming the file and line.
  text.replace(at, good.size(), "    12.50    0.66    0.66     1.5    12.00");
  try {
    parse_nccl_tests(text, "a.log");
    ADD_FAILURE() << "accepted #wrong 1.5";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("a.log:13: out-of-place #wrong '1.5'"), std::string::npos) << e.what();
  }
}

// -I 1 (per-iteration columns after each block) and a trace-replay line
// with only the in-place block.
TEST(NcclTests, ReadsPerIterationColumnsAndInPlaceOnlyLines) {
  const std::string text =
      "# Collective test starting: all_gather_perf\n"
      "#       size         count      type   redop    root     time   algbw   busbw  #wrong    i_min    i_max    "
      "i_p99    i_cv%     time   algbw   busbw  #wrong    i_min    i_max    i_p99    i_cv%\n"
      "        4096           512     float    none      -1    20.00    0.20    0.10       0    19.00    21.00    "
      "21.00     1.00    21.00    0.20    0.10       0    20.00    22.00    22.00     1.00\n"
      "        8192          1024     float    none      -1                                    42.00    0.20    0.10"
      "       0    40.00    44.00    44.00     2.00\n";
  const auto logs = parse_nccl_tests(text, "c.log");
  ASSERT_EQ(logs.size(), 1u);
  ASSERT_EQ(logs[0].rows.size(), 2u);
  EXPECT_EQ(logs[0].test, "all_gather");
  EXPECT_DOUBLE_EQ(logs[0].rows[0].out_of_place.time_us, 20.0);
  EXPECT_DOUBLE_EQ(logs[0].rows[0].in_place.time_us, 21.0);
  EXPECT_FALSE(logs[0].rows[1].out_of_place.present);
  EXPECT_TRUE(logs[0].rows[1].in_place.present);
  EXPECT_DOUBLE_EQ(logs[0].rows[1].result().time_us, 42.0);  // falls back to in-place
  EXPECT_EQ(logs[0].nranks(), 0);                            // nothing says how many ranks
}

// srun --label prefixes every line with the task number.
TEST(NcclTests, ReadsLauncherPrefixedLines) {
  const std::string text =
      " 0: # nThread 1 nGpus 1 minBytes 8388608 maxBytes 8388608 step: 2(factor) warmup iters: 5 iters: 20\n"
      " 0: #  Rank  0 Group  0 Pid 291005 on    node005 device  0 [0x18] NVIDIA H100 80GB HBM3\n"
      " 0: #  Rank  1 Group  0 Pid 541703 on    node007 device  0 [0x18] NVIDIA H100 80GB HBM3\n"
      " 0: #       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   "
      "busbw #wrong\n"
      " 0:      8388608       2097152     float     sum      -1    215.3   38.96   73.04    N/A    180.0   46.60   "
      "87.38    N/A\n"
      "[1,0]<stdout>:     16777216       4194304     float     sum      -1    262.9   63.81  119.65    N/A    261.9   "
      "64.05  120.10    N/A\n";
  const auto logs = parse_nccl_tests(text, "srun.log");
  ASSERT_EQ(logs.size(), 1u);
  EXPECT_EQ(logs[0].nranks(), 2);
  EXPECT_EQ(logs[0].hosts().size(), 2u);
  ASSERT_EQ(logs[0].rows.size(), 2u);
  EXPECT_DOUBLE_EQ(logs[0].rows[0].out_of_place.time_us, 215.3);
  EXPECT_DOUBLE_EQ(logs[0].rows[1].in_place.busbw_gbyte_per_s, 120.10);
}

TEST(NcclTests, TwoTestsInOneFileAreTwoLogs) {
  std::string text = kModern;
  std::string second = kModern;
  second.replace(second.find("all_reduce_perf"), 15, "all_gather_perf");
  const auto logs = parse_nccl_tests(text + second, "d.log");
  ASSERT_EQ(logs.size(), 2u);
  EXPECT_EQ(logs[0].test, "all_reduce");
  EXPECT_EQ(logs[1].test, "all_gather");
  EXPECT_EQ(logs[1].nranks(), 2);
  EXPECT_EQ(logs[1].line, 18 + 10);  // kModern has 18 lines; the header is the 10th of the second copy
}

// NCCL_ALGO / NCCL_PROTO as a log says them: an export, mpirun's -x, NCCL's own INFO line; each holds for
// the tables after it, and a log without one says nothing.
TEST(NcclTests, ReadsTheAlgorithmTheRunWasHeldTo) {
  EXPECT_EQ(parse_nccl_tests(kModern, "a.log")[0].nccl_algo, "");
  const std::string exported = std::string("export NCCL_ALGO=RING\nexport NCCL_PROTO=Simple \n") + kModern;
  auto l = parse_nccl_tests(exported, "b.log");
  EXPECT_EQ(l[0].nccl_algo, "RING");
  EXPECT_EQ(l[0].nccl_proto, "Simple");
  EXPECT_EQ(l[0].nccl_proto_line, 2);
  const std::string mpirun =
      std::string("mpirun -np 2 -x NCCL_DEBUG=WARN -x NCCL_ALGO=Tree,Ring ./build/all_reduce_perf -b 8\n") + kModern;
  EXPECT_EQ(parse_nccl_tests(mpirun, "c.log")[0].nccl_algo, "Tree,Ring");
  // NCCL_DEBUG=INFO between the two tests of one file: the first table ran before it was said.
  std::string second = kModern;
  second.replace(second.find("all_reduce_perf"), 15, "all_gather_perf");
  const std::string info = "dgx-a01:41187:41187 [0] NCCL INFO NCCL_ALGO set by environment to NVLSTree\n";
  l = parse_nccl_tests(kModern + info + second, "d.log");
  ASSERT_EQ(l.size(), 2u);
  EXPECT_EQ(l[0].nccl_algo, "");
  EXPECT_EQ(l[1].nccl_algo, "NVLSTree");
  EXPECT_EQ(l[1].nccl_algo_line, 19);
}

// The published logs under tests/data/nccl-tests (README there names their sources).
TEST(NcclTests, ReadsThePublishedLogs) {
  const std::string dir = std::string(PODNET_SOURCE_DIR) + "/tests/data/nccl-tests/";
  const auto two = read_nccl_tests(dir + "h100-2node-ring-allreduce.log");
  ASSERT_EQ(two.size(), 1u);
  EXPECT_EQ(two[0].test, "");  // the published block starts at "# Using devices"
  EXPECT_EQ(two[0].nranks(), 16);
  EXPECT_EQ(two[0].hosts().size(), 2u);
  EXPECT_EQ(two[0].ranks_per_host(), 8);
  ASSERT_EQ(two[0].rows.size(), 11u);  // 8 MiB .. 8 GiB by 2
  EXPECT_EQ(two[0].rows.back().bytes, 8589934592);
  EXPECT_DOUBLE_EQ(two[0].rows.back().out_of_place.time_us, 179148);
  EXPECT_DOUBLE_EQ(two[0].avg_busbw_gbyte_per_s, 85.5294);
  EXPECT_EQ(two[0].nccl_algo, "RING");  // the author's `export NCCL_ALGO=RING`, line 1
  EXPECT_EQ(two[0].nccl_algo_line, 1);
  EXPECT_EQ(two[0].nccl_proto, "");
  const auto one = read_nccl_tests(dir + "h100-1node-allreduce.log");
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].nranks(), 8);
  EXPECT_EQ(one[0].threads * one[0].gpus_per_thread, 8);
  EXPECT_EQ(one[0].hosts().size(), 1u);
  ASSERT_EQ(one[0].rows.size(), 6u);
  EXPECT_DOUBLE_EQ(one[0].rows[0].out_of_place.busbw_gbyte_per_s, 382.99);
  // NVIDIA's DGX H100 sample: 8 processes on one host, 8 B .. 16 GiB by 2 = 32 rows; 128 MiB is the 25th.
  const auto dgx = read_nccl_tests(dir + "h100-1node-allreduce-dgx.log");
  ASSERT_EQ(dgx.size(), 1u);
  EXPECT_EQ(dgx[0].nranks(), 8);
  EXPECT_EQ(dgx[0].hosts().size(), 1u);
  ASSERT_EQ(dgx[0].rows.size(), 32u);
  EXPECT_EQ(dgx[0].rows[24].bytes, 134217728);
  EXPECT_DOUBLE_EQ(dgx[0].rows[24].out_of_place.busbw_gbyte_per_s, 400.53);
  EXPECT_THROW(read_nccl_tests(dir + "no-such.log"), InputError);
}

std::string error_of(const std::string& text) {
  try {
    parse_nccl_tests(text, "bad.log");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(NcclTests, GarbageIsAnErrorWithFileAndLine) {
  const std::string header =
      "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  "
      "#wrong\n";
  // line 2: a busbw that is not a number
  EXPECT_EQ(error_of(header + "8 2 float sum -1 10.0 0.00 x.y 0 9.5 0.00 0.00 0\n"),
            "bad.log:2: out-of-place busbw 'x.y' is not a non-negative number");
  // line 3: a truncated line (5 labels + 4 values: neither 13 columns nor the 4 of an in-place-only line)
  EXPECT_NE(error_of(header + "8 2 float sum -1 10.0 0.00 0.00 0 9.5 0.00 0.00 0\n8 2 float sum -1 1 2 3\n")
                .find("bad.log:3: expected 13 columns"),
            std::string::npos);
  // a column too many
  EXPECT_NE(error_of(header + "8 2 float sum -1 10.0 0.00 0.00 0 9.5 0.00 0.00 0 7\n").find("'7' is extra"),
            std::string::npos);
  // a count that is not an integer
  EXPECT_EQ(error_of(header + "8 2.5 float sum -1 10.0 0.00 0.00 0 9.5 0.00 0.00 0\n"),
            "bad.log:2: count '2.5' is not an integer");
  // no results at all
  EXPECT_NE(error_of("hello\nworld\n").find("bad.log: no nccl-tests results found"), std::string::npos);
  EXPECT_NE(error_of(header).find("no nccl-tests results found"), std::string::npos);
}

}  // namespace
}  // namespace podnet::study
