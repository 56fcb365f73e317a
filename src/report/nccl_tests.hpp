// nccl-tests text output, written: podnet's own bench result in the layout
// NVIDIA/nccl-tests prints (src/common.cu and src/util.cu), so it can be
// diffed against a real log and read by the same parsers
// (study/nccl_tests_log.hpp reads it back).
#pragma once

#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "study/nccl_tests_log.hpp"

namespace podnet::report {

using study::NcclTestsRank;

// nccl-tests' number format: the value in `width` characters with 2
// decimals, else 1, else 0, else in exponent form (util.cu getFloatStr).
std::string nccl_tests_number(double value, int width);

// The `podnet bench` result document (cmd_bench) in nccl-tests' text layout:
// one process per rank, `ranks` naming each rank's host and device. podnet
// times one execution of the collective; the in-place columns repeat the
// out-of-place ones, `#wrong` is N/A (nothing is validated).
void write_nccl_tests(const nlohmann::json& doc, const std::vector<NcclTestsRank>& ranks, std::ostream& out);

}  // namespace podnet::report
