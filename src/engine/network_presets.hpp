// Deployment presets (`network.preset`): the transport, congestion control, flow control and routing
// of a named kind of fabric, as one word. A preset fills the network keys a scenario leaves out; a key
// the scenario file, a --config-add fragment or --set gives wins (scenario.cpp). `podnet list` shows
// each preset with what it models and what it leaves out; docs/recipes/compare-transports.md uses them.
#pragma once

#include <string_view>
#include <utility>
#include <vector>

namespace podnet::engine {

struct NetworkPreset {
  const char* name;
  const char* description;                                // the deployment it names
  const char* leaves_out;                                 // what the model does not have
  std::vector<std::pair<const char*, const char*>> keys;  // network.KEY -> value
};

const std::vector<NetworkPreset>& network_presets();
// nullptr for "none" and unknown names.
const NetworkPreset* find_network_preset(std::string_view name);

}  // namespace podnet::engine
