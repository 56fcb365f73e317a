#include "engine/network_presets.hpp"

namespace podnet::engine {

const std::vector<NetworkPreset>& network_presets() {
  static const std::vector<NetworkPreset> k = {
      {"roce_dcqcn",
       "RoCEv2 fabric as most AI clusters run it: PFC (lossless), DCQCN, per-flow ECMP",
       "nothing beyond the packet engine's own limits (the packet engine's validation page lists them)",
       {{"transport", "rocev2"}, {"cc", "dcqcn_nic"}, {"pfc", "true"}, {"routing", "ecmp"}}},
      {"uec",
       "Ultra Ethernet 1.0: NSCC, packet trimming, reliable unordered delivery (selective resends), REPS entropy "
       "spraying, no PFC (RoCEv2's 82-byte framing stands in for UET's headers)",
       "receiver credits (uec_rccc adds them), link-level retry and credit-based flow control (network.link_retry "
       "and network.link_credits add them), NSCC's multipath feedback (cc nscc_median), REPS's freeze mode after "
       "a timeout",
       {{"transport", "rocev2"}, {"cc", "nscc"}, {"pfc", "false"}, {"routing", "reps"}, {"delivery", "unordered"}}},
      {"uec_rccc",
       "Ultra Ethernet 1.0 with receiver credits (RCCC) in place of NSCC: the receiving NIC grants its line rate "
       "round robin, 1.5 BDP of speculative credit first, packet trimming, REPS entropy spraying, no PFC",
       "as uec; of RCCC, the request shared among a NIC's queued senders and the pull-rate cuts for PCIe and "
       "oversubscription; cc nscc_rccc runs both",
       {{"transport", "rocev2"}, {"cc", "rccc"}, {"pfc", "false"}, {"routing", "reps"}, {"delivery", "unordered"}}},
      {"mrc",
       "MRC (Multipath Reliable Connection, OCP 2026) on a multi-plane fabric (server.nic_planes): each queue "
       "pair sprays round robin over 64 entropy values spread over the planes, each naming one path (routing "
       "mrc); a marked path is swapped, one that lost a packet rests 100 us and is then probed; packet trimming "
       "with selective resends, no PFC; NSCC stands in for its congestion control",
       "MRC's own congestion control, probe packets apart from data, SRv6 source routes (entropy hashing names "
       "the same fixed paths)",
       {{"transport", "rocev2"}, {"cc", "nscc"}, {"pfc", "false"}, {"routing", "mrc"}, {"delivery", "unordered"}}},
      {"spectrum_x",
       "NVIDIA Spectrum-X-like: per-packet adaptive routing on the switches' queues, the NIC reorders "
       "(direct data placement), PFC; DCQCN stands in for its congestion control",
       "Spectrum-X's own congestion control (switch telemetry to the NIC)",
       {{"transport", "rocev2"}, {"cc", "dcqcn_nic"}, {"pfc", "true"}, {"routing", "adaptive"}}},
      {"infiniband_ar",
       "InfiniBand with adaptive routing: credit-based lossless links, per-packet adaptive routing, the HCA "
       "reorders",
       "InfiniBand's congestion control (FECN/BECN), SHARP (switch.in_network_reduction)",
       {{"transport", "infiniband"}, {"cc", "infiniband"}, {"routing", "adaptive"}}},
  };
  return k;
}

const NetworkPreset* find_network_preset(std::string_view name) {
  for (const auto& p : network_presets())
    if (name == p.name) return &p;
  return nullptr;
}

}  // namespace podnet::engine
