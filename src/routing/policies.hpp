// The registry of routing policies: one entry per policy, each with a
// description, the topology families it applies to and a parameter schema
// (scenario section `routing:`; `podnet list` prints them). The policies
// themselves and their maths are in router.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/params.hpp"

namespace podnet::routing {

// What a Router is built with (see router.hpp for each option's effect).
struct RouteOptions {
  std::string policy = "ecmp";
  uint64_t seed = 1;            // hash seed of every switch (ECMP, tie breaks, Valiant's intermediate group)
  bool per_switch_seed = true;  // false: every switch hashes with the same seed (shows hash polarization)
  bool pxn = true;              // NCCL PXN: cross rails over NVLink inside the source server
};

// How a Router chooses among the paths (router.hpp); "minimal" is ECMP over a dragonfly's minimal paths.
enum class PolicyKind : uint8_t { Ecmp, Adaptive, Spray, Static, DimensionOrder, Valiant, Ugal };
// What the packet engine does per packet: nothing (the flow's route), the least-loaded next hop at every
// switch (adaptive routing), every next hop in turn (spraying), or the next hop the packet's entropy value
// hashes to, chosen by the sender (Ultra Ethernet's REPS).
enum class PerPacket : uint8_t { None, LeastLoaded, Spray, Entropy };

struct PolicyInfo {
  const char* name;
  const char* description;
  const char* families;  // topology families it applies to; "any" for all
  std::vector<ParamSpec> (*params)();
  PolicyKind kind;
  PerPacket per_packet = PerPacket::None;  // the packet engine's choice per packet
  bool load_aware = false;                 // a flow's path follows the links' load (adaptive, UGAL)
  bool path_set = false;  // entropy values from MRC's set of paths, which name the plane too (packet/mrc_paths.hpp)
};

const std::vector<PolicyInfo>& policies();
const PolicyInfo* find_policy(std::string_view name);
// The policy named `name`; Error listing the policies for an unknown one.
const PolicyInfo& policy_info(std::string_view name);
// True if `info` applies to topology family `family`.
bool policy_applies(const PolicyInfo& info, std::string_view family);

// Options from a validated Params of the policy's schema (absent keys keep
// their defaults).
RouteOptions route_options(std::string policy, const Params& p);

}  // namespace podnet::routing
