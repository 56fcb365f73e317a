#include "engine/packet/packet_options.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace podnet::engine::packet {

const std::vector<CcPreset>& cc_presets() {
  static const std::vector<CcPreset> k = {
      {"dcqcn_paper", "DCQCN, paper / fluid-model parameters (Kmin 5 KB, Kmax 200 KB, Pmax 1 %, 50/55 us timers)"},
      {"dcqcn_nic", "DCQCN, NIC-style parameters of the HPCC repository (1 us alpha, 4 us decrease, 300 us timer)"},
      {"infiniband", "InfiniBand: credit-based lossless links, no end-to-end congestion control"},
      {"none", "line rate, no congestion control; PFC (or drops without PFC)"},
  };
  return k;
}

DcqcnParams dcqcn_preset(std::string_view cc) {
  using namespace podnet::literals;
  DcqcnParams p;
  if (cc == "dcqcn_paper") {
    p.enabled = true;
    p.ref_bps = 0;  // absolute values
    p.kmin = 5'000;
    p.kmax = 200'000;
    p.pmax = 0.01;
    p.g = 1.0 / 256;
    p.alpha0 = 1.0;
    p.cnp_interval = 50_us;
    p.alpha_interval = 55_us;
    p.decrease_interval = 50_us;
    p.increase_timer = 55_us;
    p.byte_counter = 10'000'000;
    p.fast_recovery = 5;
    p.rai_bps = 40e6;
    p.rhai_bps = 400e6;
    p.min_rate_bps = 100e6;
    p.clamp_target = true;
    return p;
  }
  if (cc == "dcqcn_nic") {
    p.enabled = true;
    p.ref_bps = 25e9;  // scale by bw / 25G
    p.kmin = 100'000;
    p.kmax = 400'000;
    p.pmax = 0.2;
    p.g = 1.0 / 256;
    p.alpha0 = 1.0;
    p.cnp_interval = 4_us;
    p.alpha_interval = 1_us;
    p.decrease_interval = 4_us;
    p.increase_timer = 300_us;
    p.byte_counter = 0;
    p.fast_recovery = 1;
    p.rai_bps = 5e6;
    p.rhai_bps = 50e6;
    p.min_rate_bps = 1e6;
    p.clamp_target = false;
    return p;
  }
  if (cc == "infiniband" || cc == "none") return p;
  std::string names;
  for (const auto& c : cc_presets()) names += (names.empty() ? "" : ", ") + std::string(c.name);
  throw InputError(fmt::format("unknown congestion control '{}'; expected one of: {}", cc, names));
}

}  // namespace podnet::engine::packet
