// The engine registry: every fidelity under its name, with a description
// (`podnet list`) and a factory (make_backend). An explicit table in
// registry.cpp, not self-registration from static initializers: those are
// dropped by the linker when nothing else references their object file in a
// static library. Adding an engine: its backend class, one row in the table.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "engine/backend.hpp"
#include "engine/options.hpp"
#include "topology/topology.hpp"

namespace podnet::engine {

struct EngineInfo {
  const char* name;
  const char* description;
  std::unique_ptr<NetworkBackend> (*make)(const topology::Topology& topo, const NetworkOptions& options);
};
const std::vector<EngineInfo>& engines();
// Throws InputError for an unknown engine (listing them) and Error for a
// routing policy that does not apply to the topology.
std::unique_ptr<NetworkBackend> make_backend(std::string_view engine, const topology::Topology& topo,
                                             const NetworkOptions& options);
// With default options (ECMP, rocev2, no failures).
std::unique_ptr<NetworkBackend> make_backend(std::string_view engine, const topology::Topology& topo);

}  // namespace podnet::engine
