#include "engine/options.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace podnet::engine {

const std::vector<TransportPreset>& transport_presets() {
  // Per-packet wire bytes beyond payload:
  //   rocev2: preamble+SFD 8, Ethernet 14, IPv4 20, UDP 8, IB BTH 12, ICRC 4, FCS 4, inter-frame gap 12 = 82
  //   infiniband: LRH 8, BTH 12, ICRC 4, VCRC 2 = 26
  //   tcp: preamble 8, Ethernet 14, IPv4 20, TCP 20 + 12 (timestamps), FCS 4, gap 12 = 90, 9000-byte jumbo MTU
  //        (payload 9000 - 52 = 8948)
  // Stack latency: one-way endpoint latency per message step, as the presets
  // (RoCEv2 ~5 us, InfiniBand ~2 us, TCP ~50 us); override with network.stack_latency.
  static const std::vector<TransportPreset> k = {
      {"rocev2", "RDMA over Converged Ethernet v2: 4096-byte MTU, 82 B/packet overhead, 5 us stack", Time(5000000),
       4096, 82, LinkClass::Ethernet, "dcqcn_nic", true},
      {"infiniband", "InfiniBand RC: 4096-byte MTU, 26 B/packet overhead, 2 us stack", Time(2000000), 4096, 26,
       LinkClass::InfiniBand, "infiniband", true},
      {"tcp", "TCP/IP over Ethernet, 9000-byte jumbo frames (8948 B payload), 50 us stack; DCTCP", Time(50000000), 8948,
       142, LinkClass::Ethernet, "dctcp", false},
  };
  return k;
}

Transport transport_preset(std::string_view name) {
  std::string names;
  for (const auto& p : transport_presets()) {
    if (name == p.name)
      return Transport{p.name, p.stack_latency, p.mtu, p.header_bytes, p.nic_links, p.default_cc, p.rdma_mtu};
    names += (names.empty() ? "" : ", ") + std::string(p.name);
  }
  throw InputError(fmt::format("unknown transport '{}'; expected one of: {}", name, names));
}

}  // namespace podnet::engine
