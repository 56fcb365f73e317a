#include "reliability/inventory.hpp"

#include <algorithm>
#include <deque>
#include <fmt/format.h>
#include <map>
#include <tuple>

#include "core/error.hpp"
#include "core/units.hpp"

namespace podnet::reliability {

using topology::LinkId;
using topology::Media;
using topology::NodeId;
using topology::NodeKind;

const char* role_name(Role r) {
  switch (r) {
    case Role::Compute: return "compute";
    case Role::Rail: return "rail";
    case Role::DirectLink: return "direct_link";
    case Role::Leaf: return "leaf";
    case Role::FabricLink: return "fabric_link";
    case Role::FabricSwitch: return "fabric_switch";
  }
  return "?";
}

int64_t Inventory::count(const std::string& key) const {
  for (const auto& c : classes)
    if (c.key == key) return c.count;
  return 0;
}

int64_t Inventory::count_part(Part p) const {
  int64_t n = 0;
  for (const auto& c : classes)
    if (c.part == p) n += c.count;
  return n;
}

namespace {

// Accumulates classes under a sort key: (group, sub-order, part order).
class Tally {
 public:
  explicit Tally(bool members) : members_(members) {}
  void add(int group, int sub, const std::string& key, const std::string& label, Part part, Role role, int64_t n,
           int32_t member = -1, bool local = true) {
    auto [it, fresh] = by_key_.try_emplace(key);
    if (fresh) {
      it->second.order = {group, sub, static_cast<int>(part)};
      it->second.c = {key, label, part, role, 0, {}};
    }
    it->second.c.count += n;
    it->second.c.local = it->second.c.local && local;
    if (members_ && member >= 0) it->second.c.members.push_back(member);
  }
  std::vector<ComponentClass> take() const {
    std::vector<const Entry*> v;
    for (const auto& [k, e] : by_key_)
      if (e.c.count > 0) v.push_back(&e);
    std::stable_sort(v.begin(), v.end(), [](const Entry* a, const Entry* b) { return a->order < b->order; });
    std::vector<ComponentClass> out;
    for (const Entry* e : v) out.push_back(e->c);
    return out;
  }

 private:
  bool members_;
  struct Entry {
    std::tuple<int, int, int> order;
    ComponentClass c;
  };
  std::map<std::string, Entry> by_key_;
};

enum Group { kCompute = 0, kAccess = 1, kLeaves = 2, kFabricLinks = 3, kFabricSwitches = 4 };

// Whether another link joins the same two nodes as link `id` (a parallel twin).
bool has_twin(const topology::Topology& t, LinkId id) {
  const topology::Link& l = t.links[id];
  auto [b, e] = t.incident(l.a);
  for (const LinkId* p = b; p != e; ++p)
    if (*p != id && t.other_end(*p, l.a) == l.b) return true;
  return false;
}

// One link = one cable (copper or optical) + 2 transceivers when optical.
void add_link(Tally& tally, int group, const topology::Topology& t, LinkId id, Role role, bool local = true) {
  const topology::Link& l = t.links[id];
  const std::string& cls = t.link_classes[l.cls];
  if (l.media == Media::Optical) {
    tally.add(group, l.cls, "optical_cable:" + cls, "fibre cables (" + cls + ")", Part::OpticalCable, role, 1, id,
              local);
    tally.add(group, l.cls, "optic:" + cls, "optics (" + cls + ")", Part::Optic, role, 2, id, local);
  } else {
    tally.add(group, l.cls, "copper_cable:" + cls, "copper cables (" + cls + ")", Part::CopperCable, role, 1, id,
              local);
  }
}

}  // namespace

Inventory count_inventory(const topology::Topology& t, int64_t job_gpus) {
  const auto total = static_cast<int64_t>(t.gpus.size());
  if (job_gpus < 0 || job_gpus > total)
    throw ParamError("reliability.job_gpus",
                     fmt::format("reliability.job_gpus = {} but the fabric has {} GPUs: expected 0 (every GPU) to {}",
                                 thousands(job_gpus), thousands(total), thousands(total)));
  if (job_gpus == 0) job_gpus = total;
  std::vector<int32_t> ranks(static_cast<size_t>(job_gpus));
  for (int64_t r = 0; r < job_gpus; ++r) ranks[r] = static_cast<int32_t>(r);
  return count_inventory_of(t, ranks, false);
}

Inventory count_inventory_of(const topology::Topology& t, const std::vector<int32_t>& gpu_ranks, bool with_members) {
  const auto total = static_cast<int64_t>(t.gpus.size());
  if (t.adj_offset.size() != t.nodes.size() + 1) throw Error("internal: topology not finalized");

  Inventory inv;
  inv.fabric_gpus = total;
  Tally tally(with_members);

  // GPUs, their servers and NICs (PCIe neighbours).
  std::vector<char> endpoint(t.nodes.size(), 0);  // job GPU or NIC
  std::vector<char> server_used(static_cast<size_t>(std::max<int32_t>(t.servers, 0)), 0);
  for (const int32_t r : gpu_ranks) {
    if (r < 0 || r >= total) throw Error(fmt::format("GPU rank {} is not in the fabric (0..{})", r, total - 1));
    const NodeId g = t.gpus[r];
    if (endpoint[g]) continue;  // listed twice
    endpoint[g] = 1;
    ++inv.job_gpus;
    tally.add(kCompute, 0, "gpu", "GPUs", Part::Gpu, Role::Compute, 1, r);
    tally.add(kCompute, 0, "software", "software (per GPU)", Part::Software, Role::Compute, 1, r);
    const int32_t s = t.nodes[g].server;
    if (s >= 0 && s < t.servers && !server_used[s]) {
      server_used[s] = 1;
      ++inv.servers;
      tally.add(kCompute, 0, "host", "hosts (per server)", Part::Host, Role::Compute, 1, r);
    }
    auto [b, e] = t.incident(g);
    for (const LinkId* p = b; p != e; ++p) {
      if (t.links[*p].media != Media::Pcie) continue;
      const NodeId nic = t.other_end(*p, g);
      if (t.nodes[nic].kind == NodeKind::Nic && !endpoint[nic]) {
        endpoint[nic] = 1;
        tally.add(kCompute, 0, "nic", "NICs", Part::Nic, Role::Rail, 1, nic);
      }
    }
  }

  // Access links (an end at a job NIC or GPU) and the switches they reach.
  std::vector<char> leaf(t.nodes.size(), 0);
  for (LinkId id = 0; id < static_cast<LinkId>(t.links.size()); ++id) {
    const topology::Link& l = t.links[id];
    if (l.media == Media::NvLink || l.media == Media::Pcie) continue;
    if (!endpoint[l.a] && !endpoint[l.b]) continue;
    const bool nic_end = (endpoint[l.a] && t.nodes[l.a].kind == NodeKind::Nic) ||
                         (endpoint[l.b] && t.nodes[l.b].kind == NodeKind::Nic);
    // A multi-plane NIC (topology/planes.hpp) keeps its other planes: its link is routed around (the senders
    // toward it wait for routing to converge), as the fabric's are.
    const bool planes = nic_end && t.nic_planes > 1;
    add_link(tally, kAccess, t, id, planes ? Role::FabricLink : nic_end ? Role::Rail : Role::DirectLink, !planes);
    if (t.nodes[l.a].kind == NodeKind::Switch) leaf[l.a] = 1;
    if (t.nodes[l.b].kind == NodeKind::Switch) leaf[l.b] = 1;
  }

  // The fabric above the leaves: switches reachable without stepping down a tier.
  std::vector<char> reach(leaf);
  std::deque<NodeId> queue;
  for (NodeId n = 0; n < static_cast<NodeId>(t.nodes.size()); ++n)
    if (leaf[n]) queue.push_back(n);
  while (!queue.empty()) {
    const NodeId s = queue.front();
    queue.pop_front();
    auto [b, e] = t.incident(s);
    for (const LinkId* p = b; p != e; ++p) {
      const NodeId o = t.other_end(*p, s);
      if (t.nodes[o].kind != NodeKind::Switch || reach[o] || t.nodes[o].tier < t.nodes[s].tier) continue;
      reach[o] = 1;
      queue.push_back(o);
    }
  }
  for (LinkId id = 0; id < static_cast<LinkId>(t.links.size()); ++id) {
    const topology::Link& l = t.links[id];
    if (t.nodes[l.a].kind != NodeKind::Switch || t.nodes[l.b].kind != NodeKind::Switch) continue;
    if (reach[l.a] && reach[l.b]) add_link(tally, kFabricLinks, t, id, Role::FabricLink, has_twin(t, id));
  }

  // Switch rows by tier; a transit switch of a tier that also has job leaves gets "-transit".
  std::vector<char> tier_has_leaf(t.tier_names.size() + 1, 0);
  for (NodeId n = 0; n < static_cast<NodeId>(t.nodes.size()); ++n)
    if (leaf[n]) tier_has_leaf[t.nodes[n].tier] = 1;
  for (NodeId n = 0; n < static_cast<NodeId>(t.nodes.size()); ++n) {
    if (!reach[n]) continue;
    const int tier = t.nodes[n].tier;
    const std::string name = tier < static_cast<int>(t.tier_names.size()) ? t.tier_names[tier] : std::to_string(tier);
    const std::string label = topology::host_label(name);  // "super_spine" reads "super-spine switches"
    // A switch whose links all go down a tier (a top-tier switch) is routed around on the uplinks into it.
    bool top = true;
    {
      auto [b, e] = t.incident(n);
      for (const LinkId* p = b; p != e; ++p) {
        const NodeId o = t.other_end(*p, n);
        if (t.nodes[o].kind == NodeKind::Switch && t.nodes[o].tier >= tier) top = false;
      }
    }
    if (leaf[n] && t.nic_planes > 1) {  // a plane's leaf: its NICs carry on over the other planes
      tally.add(kLeaves, tier, "switch:" + name, label + " switches", Part::Switch, Role::FabricSwitch, 1, n, false);
    } else if (leaf[n]) {
      tally.add(kLeaves, tier, "switch:" + name, label + " switches", Part::Switch, Role::Leaf, 1, n);
    } else if (tier_has_leaf[tier]) {
      tally.add(kFabricSwitches, tier, "switch:" + name + "-transit", label + " switches (transit)", Part::Switch,
                Role::FabricSwitch, 1, n, top);
    } else {
      tally.add(kFabricSwitches, tier, "switch:" + name, label + " switches", Part::Switch, Role::FabricSwitch, 1, n,
                top);
    }
  }
  inv.classes = tally.take();
  return inv;
}

}  // namespace podnet::reliability
