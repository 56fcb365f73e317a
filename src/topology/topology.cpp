#include "topology/topology.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "core/append.hpp"
#include "core/error.hpp"

namespace podnet::topology {

const char* kind_name(NodeKind k) {
  switch (k) {
    case NodeKind::Gpu: return "gpu";
    case NodeKind::Nic: return "nic";
    case NodeKind::NvSwitch: return "nvswitch";
    case NodeKind::Switch: return "switch";
  }
  return "?";
}

const char* media_name(Media m) {
  switch (m) {
    case Media::NvLink: return "nvlink";
    case Media::Pcie: return "pcie";
    case Media::Copper: return "copper";
    case Media::Optical: return "optical";
  }
  return "?";
}

NodeId Topology::add_node(Node n) {
  nodes.push_back(std::move(n));
  return static_cast<NodeId>(nodes.size() - 1);
}

LinkId Topology::connect(NodeId a, NodeId b, Bandwidth capacity, Time latency, double length_m, Media media,
                         uint8_t cls) {
  Link l;
  l.a = a;
  l.b = b;
  l.port_a = nodes[a].ports++;
  l.port_b = nodes[b].ports++;
  l.capacity = capacity;
  l.latency = latency;
  l.length_m = static_cast<float>(length_m);
  l.media = media;
  l.cls = cls;
  links.push_back(l);
  return static_cast<LinkId>(links.size() - 1);
}

uint8_t Topology::link_class(const std::string& name) {
  for (size_t i = 0; i < link_classes.size(); ++i)
    if (link_classes[i] == name) return static_cast<uint8_t>(i);
  link_classes.push_back(name);
  return static_cast<uint8_t>(link_classes.size() - 1);
}

void Topology::finalize() {
  adj_offset.assign(nodes.size() + 1, 0);
  for (const auto& l : links) {
    ++adj_offset[l.a + 1];
    ++adj_offset[l.b + 1];
  }
  for (size_t i = 1; i < adj_offset.size(); ++i) adj_offset[i] += adj_offset[i - 1];
  adj_links.assign(adj_offset.back(), 0);
  std::vector<int32_t> fill(adj_offset.begin(), adj_offset.end() - 1);
  for (size_t i = 0; i < links.size(); ++i) {
    adj_links[fill[links[i].a]++] = static_cast<LinkId>(i);
    adj_links[fill[links[i].b]++] = static_cast<LinkId>(i);
  }
}

std::string Topology::device_name(NodeId n) const {
  std::string s;
  append_device_name(s, n);
  return s;
}

void Topology::append_device_name(std::string& out, NodeId n) const {
  const Node& node = nodes[n];
  if (node.kind == NodeKind::Switch || node.server == kNone) out += node.name;
  else if (!device_names.empty()) out += device_names[node.server];
  else append_server_name(out, node.server, servers);
}

std::string Topology::port_name(NodeId n, int32_t port) const {
  std::string s;
  append_port_name(s, n, port);
  return s;
}

void Topology::append_port_name(std::string& out, NodeId n, int32_t port) const {
  const Node& node = nodes[n];
  switch (node.kind) {
    case NodeKind::Nic:
      if (node.network != 0) {
        out.append(node.name, node.name.find('/') + 1);
        return;
      }
      out += "gpu";
      append_decimal(out, node.local);
      out += "_eth";
      // A multi-plane NIC's switch links are its last nic_planes ports, in plane order (planes.hpp).
      if (nic_planes > 1 && port >= node.ports - nic_planes) append_decimal(out, port - (node.ports - nic_planes));
      return;
    case NodeKind::Gpu:
      out += "gpu";
      append_decimal(out, node.local);
      out += "_p";
      append_decimal(out, port);
      return;
    case NodeKind::NvSwitch:
      out += "nvlink";
      append_decimal(out, port);
      return;
    case NodeKind::Switch:
      out += "Ethernet1/";
      append_decimal(out, int64_t{port} + 1);
      return;
  }
  out += '?';
}

std::string padded(int64_t value, int64_t count) {
  std::string s;
  append_padded(s, value, count);
  return s;
}

void append_padded(std::string& out, int64_t value, int64_t count) {
  size_t width = 3;
  for (int64_t c = count - 1; c >= 1000; c /= 10) ++width;
  append_zero_padded(out, value, width);
}

std::string host_label(const std::string& tier_name) {
  std::string label = tier_name;
  std::replace(label.begin(), label.end(), '_', '-');
  return label;
}

std::string server_name(int32_t server, int32_t servers) {
  std::string s;
  append_server_name(s, server, servers);
  return s;
}

void append_server_name(std::string& out, int32_t server, int32_t servers) {
  out += "gpu-node-";
  append_padded(out, server, servers);
}

}  // namespace podnet::topology
