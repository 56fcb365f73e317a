// The scenario's `network:` section: its schema and the NetworkOptions it
// gives. Like every layer's section (topology::server_params,
// collective::option_params, ...), the schema lives with the options it fills;
// the scenario layer lists the sections and validates them.
#pragma once

#include <cstdint>
#include <vector>

#include "core/params.hpp"
#include "engine/options.hpp"

namespace podnet::engine {

// Scenario section `network:` (engine, routing policy, transport and overrides).
std::vector<ParamSpec> network_params();
// Options from a validated `network:` section; the routing hash seed is the scenario seed.
NetworkOptions network_options_from(const Params& p, uint64_t seed);

}  // namespace podnet::engine
