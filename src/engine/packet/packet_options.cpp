#include "engine/packet/packet_options.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "engine/packet/cc/congestion_control.hpp"

namespace podnet::engine::packet {

const std::vector<CcPreset>& cc_presets() {
  static const std::vector<CcPreset> k = [] {
    std::vector<CcPreset> v;
    for (const auto& e : cc::registry()) {
      const cc::Traits t = e.make(cc::Context{})->traits();
      CcPreset p{e.name, e.description, t.ecn, t.kmin, t.kmax, t.pmax, t.ecn_ref_bps};
      p.credits = t.credits;
      p.cnp = t.cnp;
      p.trim = t.trim;
      p.acks = t.ack_echo || t.rtt || t.int_telemetry;
      // A band that moves with the fabric's round trip: read it at 10 us, as a fraction of that round trip's bytes.
      cc::Context at;
      at.network_rtt = 10'000'000;
      const cc::Traits r = e.make(at)->traits();
      if (t.ecn && (r.kmin != t.kmin || r.kmax != t.kmax)) {
        const double bdp = (t.ecn_ref_bps > 0 ? t.ecn_ref_bps : 1.0) / 8.0 * 10e-6;
        p.kmin_rtt = static_cast<double>(r.kmin) / bdp;
        p.kmax_rtt = static_cast<double>(r.kmax) / bdp;
      }
      v.push_back(p);
    }
    return v;
  }();
  return k;
}

const CcPreset& cc_preset(std::string_view cc) {
  for (const CcPreset& p : cc_presets())
    if (cc == p.name) return p;
  cc::make(cc, cc::Context{});  // throws the registry's error, which lists the names
  throw InputError(fmt::format("no congestion control '{}'", cc));
}

Delivery delivery_from(std::string_view name) {
  if (name == "auto") return Delivery::Auto;
  if (name == "ordered") return Delivery::Ordered;
  if (name == "unordered") return Delivery::Unordered;
  if (name == "unreliable") return Delivery::Unreliable;
  throw InputError(
      fmt::format("network.delivery: '{}': expected auto, ordered, unordered or unreliable", std::string(name)));
}

std::string delivery_name(std::string_view cc, Delivery d, bool per_packet) {
  if (d == Delivery::Auto) {
    if (cc_preset(cc).trim) d = Delivery::Unordered;
    else if (per_packet) return "reliable, reordered by the NIC (go-back-N)";
    else d = Delivery::Ordered;
  }
  switch (d) {
    case Delivery::Ordered: return "reliable, ordered (go-back-N)";
    case Delivery::Unordered: return "reliable, unordered (selective resend)";
    default: return "unreliable (no resend)";
  }
}

std::string flow_control_name(std::string_view cc, bool pfc, bool link_credits) {
  if (link_credits || cc_preset(cc).credits) return "link credits";
  return pfc ? "PFC" : "none (lossy)";
}

}  // namespace podnet::engine::packet
