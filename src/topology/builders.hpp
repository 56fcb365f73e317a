// The registry of topology builders: one entry per family, each with a
// description and a parameter schema (`podnet list` prints them). Adding a
// family is one .hpp/.cpp with a `*_builder()` function, one line in
// builders.cpp, one unit test and one example scenario.
//
// A builder reads its own parameters (scenario section `topology:`) and the
// shared Hardware; it throws ParamError naming the key for impossible values.
#pragma once

#include <string_view>
#include <vector>

#include "core/params.hpp"
#include "topology/hardware.hpp"
#include "topology/topology.hpp"

namespace podnet::topology {

struct BuilderInfo {
  const char* name;
  const char* description;
  std::vector<ParamSpec> (*params)();
  Topology (*build)(const Params& params, const Hardware& hw);
  // Keys the family decides from others, written into the scenario before it resolves so that resolve,
  // diff and every study show the fabric that is built (a k-ary fat tree: topology.gpus and switch.radix
  // from topology.k); none for most families.
  void (*derive)(Params& topology, const Params& server, Params& sw) = nullptr;
  // A Clos whose fabric server.nic_planes may copy into planes (topology/planes.hpp).
  bool planes = false;
};

const std::vector<BuilderInfo>& builders();
const BuilderInfo* find_builder(std::string_view name);

// Builds with `b`, then applies what the switch model states for every switch
// of the fabric: hw.sharp -> Topology::sharp. A family without switches (torus)
// and sharp is a ParamError on switch.in_network_reduction. Every caller builds
// through this (build_with, the scenario).
Topology build(const BuilderInfo& b, const Params& params, const Hardware& hw);

// Convenience for tests and tools: defaults of the family, then `overrides`
// ("key=value" in scenario syntax) applied, then built.
Topology build_with(std::string_view family, const std::vector<std::pair<std::string, std::string>>& overrides,
                    const Hardware& hw);
Hardware default_hardware();

// GPUs of a classic k-ary fat tree (topology.k): k^3/4 host ports (k pods x k/2 edge switches x k/2 ports),
// gpus_per_server GPUs per nics_per_server ports; 0 when k is odd or the NICs do not divide k/2 (the builder
// refuses those, saying why).
int64_t k_ary_fat_tree_gpus(int64_t k, int64_t gpus_per_server, int64_t nics_per_server);

}  // namespace podnet::topology
