#include "engine/link_classes.hpp"

#include <fmt/format.h>

namespace podnet::engine {

namespace {

constexpr const char* kNames[kLinkClassCount] = {"nvlink", "pcie", "ethernet", "infiniband", "ici"};

// Defaults as scenario text (sources in link_classes.hpp).
struct Default {
  const char* efficiency;
  const char* why;
};
constexpr Default kDefaults[kLinkClassCount] = {
    {"0.824", "NCCL topo.h SM90_NVLINK_BW 20.6 GB/s of 25 GB/s per NVLink 4 link"},
    {"0.894", "PCIe 128b/130b coding x 256 B TLP payload / 282 B on the wire"},
    {"1", "NCCL prices a NIC at its port speed; the transport's header overhead still applies"},
    {"1", "NCCL prices a NIC at its port speed; the transport's header overhead still applies"},
    {"1", "no published derating of TPU ICI links"},
};

}  // namespace

const char* link_class_name(LinkClass c) { return kNames[static_cast<size_t>(c)]; }

std::array<LinkClassModel, kLinkClassCount> LinkClassOptions::defaults() {
  std::array<LinkClassModel, kLinkClassCount> a{};
  for (int c = 0; c < kLinkClassCount; ++c) a[static_cast<size_t>(c)].efficiency = std::stod(kDefaults[c].efficiency);
  return a;
}

LinkClass link_class_of(const topology::Topology& t, topology::LinkId l, LinkClass nic_links) {
  const auto& link = t.links[static_cast<size_t>(l)];
  if (link.media == topology::Media::NvLink) return LinkClass::NvLink;
  if (link.media == topology::Media::Pcie) return LinkClass::Pcie;
  if (t.nodes[static_cast<size_t>(link.a)].kind == topology::NodeKind::Gpu &&
      t.nodes[static_cast<size_t>(link.b)].kind == topology::NodeKind::Gpu)
    return LinkClass::Ici;
  return nic_links;
}

std::vector<ParamSpec> link_class_params() {
  std::vector<ParamSpec> v;
  for (int c = 0; c < kLinkClassCount; ++c) {
    v.push_back({fmt::format("{}_efficiency", kNames[c]), ParamType::Real, kDefaults[c].efficiency,
                 fmt::format("payload share of a {} link's raw rate, before any transport header overhead ({})",
                             kNames[c], kDefaults[c].why),
                 0.01, 1.0});
    v.push_back({fmt::format("{}_latency", kNames[c]), ParamType::Time, "0s",
                 fmt::format("added to every traversal of a {} link, on top of the link's own latency", kNames[c]), 0,
                 1e300});
  }
  return v;
}

LinkClassOptions link_classes_from(const Params& p) {
  LinkClassOptions o;
  for (int c = 0; c < kLinkClassCount; ++c) {
    o.classes[static_cast<size_t>(c)].efficiency = p.get_real(fmt::format("{}_efficiency", kNames[c]));
    o.classes[static_cast<size_t>(c)].latency = p.get_time(fmt::format("{}_latency", kNames[c]));
  }
  return o;
}

}  // namespace podnet::engine
