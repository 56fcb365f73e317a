#include "study/frontend_io.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>

#include "core/error.hpp"
#include "engine/registry.hpp"
#include "plan/transfer_plan.hpp"
#include "routing/route.hpp"

namespace podnet::study {

namespace {

// The engine to move terabytes with: the scenario's, or, when it is not cheap enough for that, the first
// engine that is and still models links shared between flows.
std::string io_engine(const std::string& engine) {
  if (engine::engine_info(engine).traits.many_runs) return engine;
  for (const auto& e : engine::engines())
    if (e.traits.many_runs && e.traits.contention) return e.name;
  return engine;
}

// What a link of the frontend is, for the bound: the storage media, a NIC's cable, or a tier's uplinks.
std::string link_role(const topology::FrontendFabric& f, topology::LinkId l) {
  const topology::Topology& t = f.topology;
  const topology::Link& link = t.links[l];
  const topology::Node& a = t.nodes[link.a];
  const topology::Node& b = t.nodes[link.b];
  const topology::Node* nic = a.kind == topology::NodeKind::Nic ? &a : b.kind == topology::NodeKind::Nic ? &b : nullptr;
  if (nic != nullptr) {
    const bool storage = nic->server >= f.server_ports();  // the port index (frontend.hpp)
    const bool host = a.kind == topology::NodeKind::Gpu || b.kind == topology::NodeKind::Gpu;
    if (host) return storage ? "the storage nodes' media" : "the servers' host links";
    return storage ? "the storage nodes' NICs" : "the servers' frontend NICs";
  }
  return fmt::format("the frontend's {} links", t.link_classes[link.cls]);
}

FrontendTransfer run(const topology::FrontendFabric& f, const topology::Topology& t, const plan::TransferPlan& p,
                     double bytes, const std::string& engine, engine::NetworkOptions options) {
  options.hottest_links = static_cast<int32_t>(2 * t.links.size());
  const engine::RunReport r = engine::make_backend(engine, t, options)->run(p);
  FrontendTransfer out;
  out.seconds = r.makespan.seconds();
  out.gbyte_per_s = out.seconds > 0 ? bytes / out.seconds / 1e9 : 0;
  std::map<std::string, double> busiest;  // by role: the highest mean utilization
  for (const auto& l : r.hottest) {
    double& u = busiest[link_role(f, routing::link_of(l.link))];
    u = std::max(u, l.mean_utilization);
  }
  double top = 0;
  for (const auto& [role, u] : busiest) top = std::max(top, u);
  for (const auto& [role, u] : busiest)
    if (top > 0 && u >= top * (1 - 1e-3)) out.bound += (out.bound.empty() ? "" : " and ") + role;
  return out;
}

}  // namespace

FrontendIo simulate_checkpoint(const topology::FrontendFabric& f, double bytes, int32_t servers,
                               const std::string& engine, const engine::NetworkOptions& options) {
  const topology::FrontendConfig& c = f.config;
  if (c.storage_nodes < 1 || servers < 1 || servers > f.servers)
    throw Error(
        fmt::format("simulate_checkpoint: {} servers of {} and {} storage nodes", servers, f.servers, c.storage_nodes));
  FrontendIo io;
  io.bytes = bytes;
  io.servers = servers;
  io.engine = io_engine(engine);
  const int32_t clients = servers * c.nics;
  const int32_t targets = f.storage_ports();
  const int32_t k = std::min(c.stripes, targets);
  const auto flow_bytes = static_cast<Bytes>(std::llround(bytes / (static_cast<double>(clients) * k)));
  plan::TransferPlan write, read;
  write.op = read.op = "checkpoint";
  for (int32_t client = 0; client < clients; ++client)
    for (int32_t j = 0; j < k; ++j) {
      const int32_t target = f.server_ports() + static_cast<int32_t>((int64_t{client} * k + j) % targets);
      plan::Transfer w;
      w.ranks = {client, target};
      w.bytes = flow_bytes;
      w.label = "checkpoint/write";
      plan::Transfer r = w;
      r.ranks = {target, client};
      r.label = "checkpoint/read";
      write.add(std::move(w));
      read.add(std::move(r));
    }
  io.flows = static_cast<int64_t>(write.transfers.size());
  // The storage media: each port's host link carries the node's bandwidth / its ports, in payload.
  const double host_efficiency = options.links[engine::LinkClass::Pcie].efficiency;
  auto with_media = [&](double node_Bps) {
    topology::Topology t = f.topology;
    if (node_Bps <= 0) return t;
    const double port_bps = node_Bps * 8 / c.storage_nics / host_efficiency;
    for (int32_t port = f.server_ports(); port < f.ports(); ++port) {
      const topology::NodeId host = t.gpus[port];
      const auto [first, last] = t.incident(host);
      for (const topology::LinkId* l = first; l != last; ++l) t.links[*l].capacity = Bandwidth(port_bps);
    }
    return t;
  };
  const double moved = static_cast<double>(flow_bytes) * static_cast<double>(io.flows);
  io.write = run(f, with_media(c.storage_write_Bps), write, moved, io.engine, options);
  io.read = run(f, with_media(c.storage_read_Bps), read, moved, io.engine, options);
  return io;
}

}  // namespace podnet::study
