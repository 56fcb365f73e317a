// Probe result files (`podnet diagnose --probes FILE`: a user's own probing
// system's results, docs/commands/diagnose.md), read against the k = 4 fat-tree with one
// GPU and one NIC per server that the seeds in tests/fuzz/probe_csv/ were
// written for (`podnet diagnose` on `topology: {family: fat_tree, k: 4}`,
// `server: {gpus: 1, nics: 1}`, `--probes-out`).
#include "diagnose/probe_csv.hpp"
#include "fuzz_target.hpp"
#include "routing/router.hpp"
#include "topology/builders.hpp"

namespace {

const podnet::topology::Topology& fat_tree4() {
  static const podnet::topology::Topology t = [] {
    podnet::topology::Hardware hw = podnet::topology::default_hardware();
    hw.gpus_per_server = 1;
    hw.nics_per_server = 1;
    hw.nvlink_domain = 1;
    return podnet::topology::build_with("fat_tree", {{"k", "4"}}, hw);
  }();
  return t;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string in = podnet::fuzz::text(data, size);
  return podnet::fuzz::guarded([&] {
    podnet::routing::RouteOptions o;
    o.policy = "spray";
    podnet::routing::Router spray(fat_tree4(), o);
    (void)podnet::diagnose::read_probe_csv(in, "fuzz.csv", fat_tree4(), spray);
  });
}
