#include "routing/policies.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace podnet::routing {

namespace {

std::vector<ParamSpec> common_params() {
  return {
      {"seed", ParamType::Int, "1", "hash seed (switch seeds, tie breaks, Valiant's intermediate group)", 0, 9.007e15},
      {"pxn", ParamType::Bool, "true",
       "NCCL PXN (default since NCCL 2.12): a flow to a NIC on another rail first crosses NVLink to the GPU of its "
       "server on that rail, so network traffic stays on the destination's rail"},
  };
}

std::vector<ParamSpec> hashed_params() {
  auto p = common_params();
  p.push_back({"per_switch_seed", ParamType::Bool, "true",
               "each switch hashes with its own seed; false = one seed everywhere (exhibits hash polarization)"});
  return p;
}

}  // namespace

const std::vector<PolicyInfo>& policies() {
  static const std::vector<PolicyInfo> k = {
      {"ecmp",
       "per-flow ECMP: each switch hashes (src NIC, dst NIC, UDP source port from the QP) over its "
       "equal-cost next hops",
       "any", hashed_params, PolicyKind::Ecmp},
      {"adaptive",
       "adaptive: each switch picks the least-loaded equal-cost next hop (ties by hash); per flow in the flow and "
       "analytical engines, per packet in the packet engine (the receiver reorders)",
       "any", hashed_params, PolicyKind::Adaptive, PerPacket::LeastLoaded, true},
      {"spray", "per-packet spraying: at every hop the bytes split evenly over all equal-cost next hops", "any",
       common_params, PolicyKind::Spray, PerPacket::Spray},
      {"reps",
       "per-packet entropy: the sender picks each packet's entropy value, switches hash it over their "
       "equal-cost next hops; values whose ACKs return unmarked are reused, others replaced (Ultra Ethernet's "
       "REPS; the flow and analytical engines split evenly, as spray)",
       "any", common_params, PolicyKind::Spray, PerPacket::Entropy},
      {"mrc",
       "per-packet entropy from MRC's path set: each queue pair sprays round robin over 64 values spread evenly "
       "over the planes of a multi-plane fabric (server.nic_planes); a value whose ACK was marked is swapped, one "
       "that lost a packet rests 100 us (the flow and analytical engines split evenly, as spray)",
       "any", common_params, PolicyKind::Spray, PerPacket::Entropy, false, true},
      {"static", "one fixed shortest path: always the lowest-id next hop (baselines, tests)", "any", common_params,
       PolicyKind::Static},
      {"dimension_order",
       "torus dimension-order routing: dimension 0, then 1, then 2, the shorter way round each "
       "ring (+ on a tie)",
       "torus", common_params, PolicyKind::DimensionOrder},
      {"minimal", "dragonfly minimal routing (local-global-local), ECMP among minimal paths",
       "dragonfly, dragonfly_plus", hashed_params, PolicyKind::Ecmp},
      {"valiant", "dragonfly Valiant: minimally to a hashed intermediate group, then minimally to the destination",
       "dragonfly, dragonfly_plus", hashed_params, PolicyKind::Valiant},
      {"ugal", "dragonfly UGAL-L: per flow, minimal or Valiant, whichever has the lower hops x (max load + weight)",
       "dragonfly, dragonfly_plus", hashed_params, PolicyKind::Ugal, PerPacket::None, true},
  };
  return k;
}

const PolicyInfo* find_policy(std::string_view name) {
  for (const auto& p : policies())
    if (name == p.name) return &p;
  return nullptr;
}

const PolicyInfo& policy_info(std::string_view name) {
  if (const PolicyInfo* p = find_policy(name)) return *p;
  std::string names;
  for (const auto& p : policies()) names += fmt::format("{}{}", names.empty() ? "" : ", ", p.name);
  throw Error(fmt::format("routing: no policy '{}'; expected one of: {}", name, names));
}

bool policy_applies(const PolicyInfo& info, std::string_view family) {
  const std::string_view fams = info.families;
  if (fams == "any") return true;
  size_t pos = 0;
  while (pos < fams.size()) {
    size_t end = fams.find(',', pos);
    if (end == std::string_view::npos) end = fams.size();
    std::string_view item = fams.substr(pos, end - pos);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    if (item == family) return true;
    pos = end + 1;
  }
  return false;
}

RouteOptions route_options(std::string policy, const Params& p) {
  RouteOptions o;
  o.policy = std::move(policy);
  if (p.has("seed")) o.seed = static_cast<uint64_t>(p.get_int("seed"));
  if (p.has("pxn")) o.pxn = p.get_bool("pxn");
  if (p.has("per_switch_seed")) o.per_switch_seed = p.get_bool("per_switch_seed");
  return o;
}

}  // namespace podnet::routing
