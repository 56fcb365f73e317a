// The `podnet bench` result as a console table in nccl-tests' layout.
#pragma once

#include <iosfwd>
#include <nlohmann/json.hpp>

namespace podnet::report {

void write_bench_table(const nlohmann::json& doc, std::ostream& out);

}  // namespace podnet::report
