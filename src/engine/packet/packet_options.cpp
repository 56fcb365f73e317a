#include "engine/packet/packet_options.hpp"

#include "engine/packet/cc/congestion_control.hpp"

namespace podnet::engine::packet {

const std::vector<CcPreset>& cc_presets() {
  static const std::vector<CcPreset> k = [] {
    std::vector<CcPreset> v;
    for (const auto& e : cc::registry()) v.push_back({e.name, e.description});
    return v;
  }();
  return k;
}

std::string flow_control_name(std::string_view cc, bool pfc, bool link_credits) {
  if (link_credits || cc::make(cc, cc::Context{})->traits().credits) return "link credits";
  return pfc ? "PFC" : "none (lossy)";
}

}  // namespace podnet::engine::packet
