#include "study/frontend_io.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>

#include "core/error.hpp"
#include "core/units.hpp"
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
    const bool storage = nic->server >= f.servers;  // servers, then storage nodes (frontend.hpp)
    const bool host = link.media == topology::Media::Pcie;
    if (host) return storage ? "the storage nodes' media" : "the servers' host links";
    if (f.converged) return storage ? "the storage nodes' NICs" : "the servers' back-end NICs";
    return storage ? "the storage nodes' NICs" : "the servers' frontend NICs";
  }
  return fmt::format("the {}'s {} links", f.converged ? "back end" : "frontend", t.link_classes[link.cls]);
}

FrontendTransfer run(const topology::FrontendFabric& f, const topology::Topology& t, const plan::TransferPlan& p,
                     double bytes, const std::string& engine, engine::NetworkOptions options) {
  options.hottest_links = static_cast<int32_t>(2 * t.links.size());
  const engine::RunReport r = engine::make_backend(engine, t, options)->run(p);
  FrontendTransfer out;
  out.seconds = r.makespan.seconds();
  out.gbyte_per_s = out.seconds > 0 ? bytes / out.seconds / 1e9 : 0;
  if (r.job_failed) out.failure = r.failure.empty() ? "a flow had no path" : r.failure;
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

// The frontend with each storage port's host link set to the node's media bandwidth / its ports, in payload.
topology::Topology with_media(const topology::FrontendFabric& f, double node_Bps,
                              const engine::NetworkOptions& options) {
  topology::Topology t = f.topology;
  if (node_Bps <= 0) return t;
  const double port_bps = node_Bps * 8 / f.config.storage_nics / options.links[engine::LinkClass::Pcie].efficiency;
  for (int32_t port = f.server_ports(); port < f.ports(); ++port) {
    const topology::NodeId host = t.gpus[static_cast<size_t>(f.rank_of(port))];
    const auto [first, last] = t.incident(host);
    for (const topology::LinkId* l = first; l != last; ++l)
      if (t.links[*l].media == topology::Media::Pcie) t.links[*l].capacity = Bandwidth(port_bps);
  }
  return t;
}

// The flows between the servers and the storage ports (the header's traffic): server s moves bytes[s] over
// its NICs, each NIC to k storage ports; the clients (NICs of servers with bytes) are numbered in server order.
// `to_storage` is a write, else a read. The bytes the flows move (after rounding) in `moved`. Ports out of
// service (f.port_down) carry none: a server's bytes split over its NICs in service, clients stripe over the
// storage ports in service; why some bytes cannot move (a server with none, no storage port) in `cut`.
plan::TransferPlan storage_flows(const topology::FrontendFabric& f, const std::vector<double>& bytes, bool to_storage,
                                 const std::string& op, double& moved, std::string* cut = nullptr) {
  const topology::FrontendConfig& c = f.config;
  std::vector<int32_t> live;  // storage ports in service (index into the storage ports)
  for (int32_t q = 0; q < f.storage_ports(); ++q)
    if (!f.down(f.server_ports() + q)) live.push_back(q);
  const auto targets = static_cast<int32_t>(live.size());
  // Converged: a client NIC writes to the storage nodes' NICs of its own index (its rail), as a rail-optimized
  // back end's storage nodes are cabled, k of them.
  const int32_t k = std::min(c.stripes, f.converged ? c.storage_nodes : targets);
  plan::TransferPlan p;
  p.op = op;
  moved = 0;
  int64_t client = 0;
  std::vector<int64_t> on_rail(static_cast<size_t>(c.nics), 0);  // converged: clients so far per NIC index
  int64_t stranded = 0;
  for (int32_t s = 0; s < static_cast<int32_t>(bytes.size()); ++s) {
    if (bytes[static_cast<size_t>(s)] <= 0) continue;
    int32_t nics = 0;
    for (int32_t nic = 0; nic < c.nics; ++nic) nics += f.down(f.server_port(s, nic)) ? 0 : 1;
    if (nics == 0 || targets == 0) {
      ++stranded;
      continue;
    }
    const auto flow_bytes = static_cast<Bytes>(
        std::llround(bytes[static_cast<size_t>(s)] / (static_cast<double>(nics) * static_cast<double>(k))));
    for (int32_t nic = 0; nic < c.nics; ++nic) {
      if (f.down(f.server_port(s, nic))) continue;
      for (int32_t j = 0; j < k; ++j) {
        const int32_t port = f.rank_of(f.server_port(s, nic));
        const int32_t storage_port =
            f.converged
                ? static_cast<int32_t>((on_rail[static_cast<size_t>(nic)] * k + j) % c.storage_nodes) * c.storage_nics +
                      nic
                : live[static_cast<size_t>((client * k + j) % targets)];
        if (f.converged && j == k - 1) ++on_rail[static_cast<size_t>(nic)];
        const int32_t target = f.rank_of(f.server_ports() + storage_port);
        plan::Transfer t;
        t.ranks = to_storage ? std::vector<int32_t>{port, target} : std::vector<int32_t>{target, port};
        t.bytes = flow_bytes;
        t.label = op + (to_storage ? "/write" : "/read");
        p.add(std::move(t));
        moved += static_cast<double>(flow_bytes);
      }
      ++client;
    }
  }
  if (cut != nullptr && stranded > 0)
    *cut = targets == 0
               ? "no storage node's NIC is in service (their leaves are drained)"
               : fmt::format("{} no frontend NIC in service (their leaves are drained)",
                             stranded == 1 ? std::string("1 server has") : thousands(stranded) + " servers have");
  return p;
}

}  // namespace

FrontendIo simulate_checkpoint(const topology::FrontendFabric& f, double bytes, int32_t servers,
                               const std::string& engine, const engine::NetworkOptions& options, bool with_read) {
  const topology::FrontendConfig& c = f.config;
  if (c.storage_nodes < 1 || servers < 1 || servers > f.servers)
    throw Error(
        fmt::format("simulate_checkpoint: {} servers of {} and {} storage nodes", servers, f.servers, c.storage_nodes));
  FrontendIo io;
  io.bytes = bytes;
  io.servers = servers;
  io.engine = io_engine(engine);
  const std::vector<double> per_server(static_cast<size_t>(servers), bytes / servers);
  double moved = 0;
  std::string cut;
  const plan::TransferPlan write = storage_flows(f, per_server, true, "checkpoint", moved, &cut);
  io.flows = static_cast<int64_t>(write.transfers.size());
  io.write = run(f, with_media(f, c.storage_write_Bps, options), write, moved, io.engine, options);
  if (with_read) {
    const plan::TransferPlan read = storage_flows(f, per_server, false, "checkpoint", moved);
    io.read = run(f, with_media(f, c.storage_read_Bps, options), read, moved, io.engine, options);
  }
  if (!cut.empty()) io.write.failure = io.read.failure = cut;
  return io;
}

WriteBehindTraining write_behind_training(const topology::FrontendFabric& f, const plan::TransferPlan& iteration,
                                          const std::vector<double>& servers_bytes, const std::string& engine,
                                          const engine::NetworkOptions& options) {
  if (f.config.storage_nodes < 1 || static_cast<int32_t>(servers_bytes.size()) > f.servers)
    throw Error(fmt::format("write_behind_training: {} servers of {} and {} storage nodes", servers_bytes.size(),
                            f.servers, f.config.storage_nodes));
  WriteBehindTraining w;
  w.engine = io_engine(engine);
  double moved = 0;
  const plan::TransferPlan write = storage_flows(f, servers_bytes, true, "checkpoint", moved);
  w.bytes = moved;
  w.flows = static_cast<int64_t>(write.transfers.size());
  const topology::Topology t = with_media(f, f.config.storage_write_Bps, options);
  auto run_plan = [&](const plan::TransferPlan& p) { return engine::make_backend(w.engine, t, options)->run(p); };
  w.iteration_alone_s = run_plan(iteration).makespan.seconds();
  w.write_alone_s = write.transfers.empty() ? 0 : run_plan(write).makespan.seconds();
  plan::TransferPlan both = iteration;
  for (const plan::Transfer& x : write.transfers) both.add(x);  // no dependencies: under way from the start
  const engine::RunReport r = run_plan(both);
  const size_t n = iteration.transfers.size();
  Time ti, tw;
  for (size_t i = 0; i < r.transfers.size(); ++i) {
    Time& end = i < n ? ti : tw;
    end = std::max(end, r.transfers[i].finish);
  }
  w.iteration_s = ti.seconds();
  w.slowdown = w.iteration_alone_s > 0 ? w.iteration_s / w.iteration_alone_s : 1;
  w.outlasts = tw > ti;
  if (!w.outlasts || w.write_alone_s <= 0) {
    w.write_s = tw.seconds();
  } else {
    const double alone_Bps = moved / w.write_alone_s;
    const double during = std::max(0.0, moved - alone_Bps * (tw - ti).seconds());
    // (Nothing moved during the iteration: no rate to extrapolate; the write's end in this run stands.)
    w.write_s = during > 0 ? moved * w.iteration_s / during : tw.seconds();
  }
  return w;
}

std::vector<double> data_loading_bytes(const workload::Job& job, const std::vector<int32_t>& gpus,
                                       const topology::Topology& backend, double sample_bytes, double label_bytes) {
  std::vector<double> out(static_cast<size_t>(std::max(0, backend.servers)), 0.0);
  const double samples = static_cast<double>(job.global_batch) / static_cast<double>(job.replicas());
  for (int64_t r = 0; r < job.replicas(); ++r)
    for (const int64_t stage : job.pp > 1 ? std::vector<int64_t>{0, job.pp - 1} : std::vector<int64_t>{0}) {
      const int32_t gpu = gpus[static_cast<size_t>(job.rank(0, r, stage))];
      const int32_t server = backend.nodes[backend.gpus[static_cast<size_t>(gpu)]].server;
      out[static_cast<size_t>(server)] += samples * (stage == 0 ? sample_bytes : label_bytes);
    }
  return out;
}

DataLoading simulate_data_loading(const topology::FrontendFabric& f, const std::vector<double>& per_server,
                                  double sample_bytes, const std::string& engine,
                                  const engine::NetworkOptions& options) {
  if (f.config.storage_nodes < 1 || static_cast<int32_t>(per_server.size()) > f.servers)
    throw Error(fmt::format("simulate_data_loading: {} servers of {} and {} storage nodes", per_server.size(),
                            f.servers, f.config.storage_nodes));
  DataLoading d;
  d.sample_bytes = sample_bytes;
  d.engine = io_engine(engine);
  d.routing = options.routing.policy;
  for (const double b : per_server)
    if (b > 0) {
      d.bytes += b;
      ++d.servers;
    }
  double moved = 0;
  std::string cut;
  const plan::TransferPlan read = storage_flows(f, per_server, false, "data", moved, &cut);
  d.flows = static_cast<int64_t>(read.transfers.size());
  if (d.flows > 0) d.read = run(f, with_media(f, f.config.storage_read_Bps, options), read, moved, d.engine, options);
  if (!cut.empty()) d.read.failure = cut;
  return d;
}

}  // namespace podnet::study
