// Chakra execution traces (`podnet train --chakra`): one rank's .et file (the
// length-delimited GlobalMetadata and Nodes), then the plan its nodes make as
// a one-rank trace on an 8-GPU fabric (dependencies, cycles, communicators).
#include <sstream>

#include "fuzz_target.hpp"
#include "topology/builders.hpp"
#include "workload/chakra.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const podnet::topology::Topology topo =
      podnet::topology::build_with("rail_clos", {{"gpus", "8"}}, podnet::topology::default_hardware());
  std::istringstream in(podnet::fuzz::text(data, size));
  return podnet::fuzz::guarded([&] {
    const auto trace = podnet::workload::chakra::parse_trace(in, "fuzz.0.et", 0);
    (void)podnet::workload::chakra::build_plan({trace}, {0}, topo, podnet::workload::TrainOptions{});
  });
}
