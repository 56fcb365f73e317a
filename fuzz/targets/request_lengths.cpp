// Request length files (`inference.lengths_file`: a CSV of prompt and output tokens per request, or an Azure
// LLM inference trace, docs/commands/inference.md). Every row the reader returns is a pair of whole counts
// from 1 to 10^7; anything else is an InputError.
#include "fuzz_target.hpp"
#include "workload/inference.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string in = podnet::fuzz::text(data, size);
  return podnet::fuzz::guarded([&] {
    const podnet::workload::RequestLengths rows = podnet::workload::parse_request_lengths(in, "fuzz.csv");
    for (const auto& [prompt, output] : rows)
      if (prompt < 1 || prompt > 10'000'000 || output < 1 || output > 10'000'000) __builtin_trap();
  });
}
