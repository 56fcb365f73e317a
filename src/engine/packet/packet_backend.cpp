#include "engine/packet/packet_backend.hpp"

#include <algorithm>
#include <deque>
#include <functional>
#include <map>

#include <fmt/format.h>

#include "core/error.hpp"
#include "engine/failure_driver.hpp"
#include "engine/packet/slice_pipeline.hpp"
#include "engine/plan_runner.hpp"
#include "engine/report_util.hpp"
#include "routing/router.hpp"

namespace podnet::engine::packet {

PacketOptions default_packet_options(const NetworkOptions& options) {
  PacketOptions p;
  p.cc = options.cc != "auto" ? options.cc : options.transport.default_cc;
  p.pfc = options.pfc;
  p.buffer_bytes = options.switch_buffer;
  if (options.sample_interval.ps > 0) {
    p.sample_interval = options.sample_interval;
    p.sample_all_ports = true;
    p.sample_streams = true;
  }
  return p;
}

PacketBackend::PacketBackend(const topology::Topology& topo, NetworkOptions options)
    : topo_(topo), options_(std::move(options)), packet_(default_packet_options(options_)) {}

PacketBackend::PacketBackend(const topology::Topology& topo, NetworkOptions options, PacketOptions packet)
    : topo_(topo), options_(std::move(options)), packet_(std::move(packet)) {}

RunReport PacketBackend::run(const plan::TransferPlan& plan) {
  sim_ = std::make_unique<PacketSim>(topo_, options_, packet_);
  PacketSim& sim = *sim_;
  RunReport report;
  report.engine = name();
  PlanRunner runner(plan, report);  // rejects bad dependencies and cycles up front
  plan::check_pipelines(plan);
  runner.report_progress(&options_.progress, options_.progress_every);
  const FailureOptions& fo = options_.failures;
  const bool failures = !fo.events.empty();
  FailureDriver driver(topo_, fo, report);
  bool links_failed = false;  // a link died: once the job is over, the rest of the run is not simulated

  std::vector<std::vector<routing::PathPart>> routes;
  std::vector<std::pair<int32_t, int32_t>> hops;

  // Slice pipelines (plan::Pipeline): one per running pipelined transfer; its streams are hop h, QP q
  // at streams[h * qps + q], each cut into the pipeline's slices (a QP carries its share of every
  // slice); a stream may send the slices its hop has released.
  struct PipeRun {
    std::unique_ptr<SlicePipeline> pipe;
    int32_t qps = 1;
    std::vector<int32_t> streams;
    std::vector<int64_t> got;  // slices delivered, per stream
  };
  std::deque<PipeRun> pipes;                             // stable references
  std::vector<std::pair<int32_t, int32_t>> stream_pipe;  // by stream: (pipe, local index), pipe -1: none
  std::vector<int32_t> raised;
  auto raise_limits = [&](PipeRun& pr) {
    for (int32_t h : raised)
      for (int32_t q = 0; q < pr.qps; ++q)
        sim.release_slices(pr.streams[static_cast<size_t>(h * pr.qps + q)], pr.pipe->released(h));
    raised.clear();
  };
  // Stream s delivered more (progress or completion): the hop's delivered slices are the fewest of its QPs.
  auto refresh = [&](int32_t s) {
    if (s < 0 || s >= static_cast<int32_t>(stream_pipe.size()) || stream_pipe[s].first < 0) return;
    PipeRun& pr = pipes[static_cast<size_t>(stream_pipe[s].first)];
    const int32_t local = stream_pipe[s].second;
    const int64_t u = pr.pipe->slices();
    int64_t& n = pr.got[static_cast<size_t>(local)];
    n = std::min(u, sim.delivered_slices(s));
    if (n < u) sim.watch_slices(s, n + 1);
    const int32_t h = local / pr.qps;
    int64_t hop = u;
    for (int32_t q = 0; q < pr.qps; ++q) hop = std::min(hop, pr.got[static_cast<size_t>(h * pr.qps + q)]);
    pr.pipe->deliver(h, hop, raised);
    raise_limits(pr);
  };

  // A delay that holds its transfers' hop latency (plan::Transfer::holds_hop_latency) is shortened by
  // the latency their packets add to it physically, so that a collective takes NCCL's latency plus its
  // bytes' time, as NCCL's model and the flow engine add them. The transfers after the delay are those
  // that pay no latency of their own (latency_steps = 0), up to the next Compute. Each one's chain: its
  // pipeline's chain of hops weighted by their physical latency (SlicePipeline::chain_length; the
  // in-server prefix before the NIC once, as a stream pays it), or without a pipeline its slowest hop's.
  // What of it shows: a forwarding pipeline (period 0: chains, trees) or none shows all of it (the first
  // slice crosses the whole chain, the rest follow); a ring pipeline (period > 0) only what its bytes do
  // not cover, max(0, chain - B), B the busiest link's bytes from all the transfers after the delay / its
  // rate: a step's own slices go while the next slice is on its way, and other channels send while one
  // waits. The credit is the longest path of what shows. Routes as launch() makes them (QP 0's).
  std::vector<std::vector<int32_t>> after;  // dependents, built on first use
  std::vector<int64_t> shows_memo;          // ps along the longest path from a transfer on; -1 unknown
  std::vector<double> own_chain;            // per transfer after a delay: its chain (ps)
  std::vector<uint8_t> seen;
  std::vector<int32_t> reached;
  std::map<routing::DirLink, double> link_bytes;
  std::vector<std::pair<int32_t, int32_t>> chain_hops_buf;
  std::vector<routing::PathPart> chain_route;
  std::vector<double> chain_weight;
  const auto eligible = [&](int32_t j) {
    const plan::Transfer& t = plan.transfers[static_cast<size_t>(j)];
    return t.kind != plan::TransferKind::Compute && t.latency_steps == 0;
  };
  const auto is_ring = [&](int32_t j) {
    const plan::Transfer& t = plan.transfers[static_cast<size_t>(j)];
    return t.pipeline.slices > 0 && t.pipeline.period > 0 && t.kind != plan::TransferKind::P2p;
  };
  // Transfer j's chain (ps); adds its hops' bytes to link_bytes.
  const auto chain_of = [&](int32_t j) -> double {
    const plan::Transfer& t = plan.transfers[static_cast<size_t>(j)];
    SlicePipeline::hops_of(t, chain_hops_buf);
    if (chain_hops_buf.empty()) return 0;
    const uint64_t base = static_cast<uint64_t>(t.channel) * 1024;
    const bool piped = t.pipeline.slices > 0 && t.kind != plan::TransferKind::P2p;
    chain_weight.clear();
    double prefix = 0;  // a stream pays its in-server prefix once, at its start (prefix_latency)
    try {
      for (const auto& [a, b] : chain_hops_buf) {
        chain_route.clear();
        sim.peek_route(a, b, base, chain_route);
        const auto p = static_cast<double>(sim.prefix_latency(chain_route).ps);
        chain_weight.push_back(static_cast<double>(sim.physical_latency(chain_route).ps) - (piped ? p : 0.0));
        prefix = std::max(prefix, p);
        for (const auto& part : chain_route) link_bytes[part.link] += static_cast<double>(t.bytes) * part.fraction;
      }
    } catch (const Error&) {
      return 0;  // no route (a failure): launch() reports it
    }
    return piped ? prefix + SlicePipeline::chain_length(t, chain_weight)
                 : *std::max_element(chain_weight.begin(), chain_weight.end());
  };
  double busy_ps = 0;  // B of the delay being credited
  std::function<int64_t(int32_t)> shows_from = [&](int32_t j) -> int64_t {
    int64_t& memo = shows_memo[static_cast<size_t>(j)];
    if (memo >= 0) return memo;
    int64_t next = 0;
    for (int32_t k : after[static_cast<size_t>(j)])
      if (eligible(k)) next = std::max(next, shows_from(k));
    const double c = own_chain[static_cast<size_t>(j)];
    memo = static_cast<int64_t>((is_ring(j) ? std::max(0.0, c - busy_ps) : c) + 0.5) + next;
    return memo;
  };
  const auto hop_latency_credit = [&](int32_t i) -> int64_t {
    if (after.empty()) {
      after.assign(plan.transfers.size(), {});
      for (size_t j = 0; j < plan.transfers.size(); ++j)
        for (int32_t d : plan.transfers[j].deps) after[static_cast<size_t>(d)].push_back(static_cast<int32_t>(j));
      shows_memo.assign(plan.transfers.size(), -1);
      own_chain.assign(plan.transfers.size(), 0);
      seen.assign(plan.transfers.size(), 0);
    }
    // Every transfer after the delay once: its chain, and its bytes on the links (B).
    reached.clear();
    link_bytes.clear();
    for (int32_t k : after[static_cast<size_t>(i)])
      if (eligible(k) && !seen[static_cast<size_t>(k)]) seen[static_cast<size_t>(k)] = 1, reached.push_back(k);
    for (size_t q = 0; q < reached.size(); ++q) {
      const int32_t j = reached[q];
      own_chain[static_cast<size_t>(j)] = chain_of(j);
      for (int32_t k : after[static_cast<size_t>(j)])
        if (eligible(k) && !seen[static_cast<size_t>(k)]) seen[static_cast<size_t>(k)] = 1, reached.push_back(k);
    }
    busy_ps = 0;
    for (const auto& [link, bytes] : link_bytes)
      busy_ps = std::max(busy_ps, bytes * 8e12 / static_cast<double>(sim.link_bps(link)));
    int64_t credit = 0;
    for (int32_t k : after[static_cast<size_t>(i)])
      if (eligible(k)) credit = std::max(credit, shows_from(k));
    return credit;
  };

  auto launch = [&](int32_t i, Time at) {
    const plan::Transfer& t = plan.transfers[i];
    const uint64_t base = static_cast<uint64_t>(t.channel) * 1024;
    const int32_t steps = std::max(0, t.latency_steps);
    const int32_t qps = std::max(1, t.qps);
    if (t.kind == plan::TransferKind::Compute) {
      Time duration = t.duration;
      if (failures) {  // a straggler slows the whole delay, as on the flow engine; the hops' credit comes after
        const double factor = driver.compute_factor(t.ranks);
        if (factor != 1.0) duration = Time(static_cast<int64_t>(static_cast<double>(duration.ps) * factor + 0.5));
      }
      if (t.holds_hop_latency) duration = Time(std::max<int64_t>(0, duration.ps - hop_latency_credit(i)));
      sim.add_timer(at + duration, static_cast<uint64_t>(i));
      return;
    }
    SlicePipeline::hops_of(t, hops);  // in the order its streams are made
    routes.assign(hops.size() * qps, {});
    double latency_sum = 0;  // ring/coupled: sum over hops of the mean QP latency
    try {
      for (size_t h = 0; h < hops.size(); ++h)
        for (int32_t q = 0; q < qps; ++q) {
          auto& r = routes[h * qps + q];
          sim.route(hops[h].first, hops[h].second, base + static_cast<uint64_t>(q), r);
          latency_sum += static_cast<double>(sim.hop_latency(r).ps) / qps;
        }
    } catch (const Error& e) {
      if (!failures) throw;
      driver.fail_launch(at, t.label.empty() ? fmt::format("transfer {}", i) : t.label, e.what());
      return;
    }
    const Time mean_total(
        static_cast<int64_t>((hops.empty() ? 0.0 : latency_sum / static_cast<double>(hops.size())) * steps + 0.5));
    const bool piped = t.pipeline.slices > 0 && t.kind != plan::TransferKind::P2p && !hops.empty();
    int32_t pipe_index = -1;
    if (piped) {
      pipe_index = static_cast<int32_t>(pipes.size());
      PipeRun& pr = pipes.emplace_back();
      pr.pipe = std::make_unique<SlicePipeline>(t.pipeline, SlicePipeline::upstream_of(t));
      pr.qps = qps;
      pr.got.assign(hops.size() * qps, 0);
      pr.pipe->start(raised);
      raised.clear();  // the streams below start with these limits
    }
    for (size_t h = 0; h < hops.size(); ++h)
      for (int32_t q = 0; q < qps; ++q) {
        StreamSpec s;
        s.src = hops[h].first;
        s.dst = hops[h].second;
        s.bytes = t.bytes / qps + (q < t.bytes % qps ? 1 : 0);
        if (t.max_rate_bps > 0 && s.bytes > 0)  // each QP of a P2p or of a hop its share (transfer_plan.hpp)
          s.max_rate_bps = t.max_rate_bps * static_cast<double>(s.bytes) / static_cast<double>(t.bytes);
        s.entropy = base + static_cast<uint64_t>(q);
        s.start = at;
        const auto& r = routes[h * qps + q];
        if (failures) {  // on a failed direction: stalls until the first repair among them
          routing::DirLink first = -1;
          for (const auto& p : r)
            if (driver.repair_at(p.link) != Time::max() &&
                (first < 0 || driver.repair_at(p.link) < driver.repair_at(first)))
              first = p.link;
          if (first >= 0) driver.stalled_start(first, at, t.label.empty() ? fmt::format("transfer {}", i) : t.label);
        }
        s.latency = t.kind == plan::TransferKind::P2p ? sim.hop_latency(r) * steps : mean_total;
        s.tag = static_cast<uint64_t>(i);
        if (piped) {
          const PipeRun& pr = pipes[static_cast<size_t>(pipe_index)];
          s.slices = pr.pipe->slices();
          s.send_slices = pr.pipe->released(static_cast<int32_t>(h));
        }
        if (options_.on_route) options_.on_route(i, r, static_cast<double>(s.bytes));
        const int32_t id = sim.add_stream(s, r);
        if (piped) {
          if (stream_pipe.size() <= static_cast<size_t>(id)) stream_pipe.resize(static_cast<size_t>(id) + 1, {-1, 0});
          stream_pipe[static_cast<size_t>(id)] = {pipe_index, static_cast<int32_t>(h * qps + q)};
          pipes[static_cast<size_t>(pipe_index)].streams.push_back(id);
        }
        runner.add_parts(i, 1);
        ++report.flows;
      }
    if (piped)  // watch every stream's first slice
      for (int32_t s : std::vector<int32_t>(pipes[static_cast<size_t>(pipe_index)].streams)) refresh(s);
    if (runner.parts_left(i) == 0) sim.add_timer(at, static_cast<uint64_t>(i));  // nothing to send
  };

  runner.start(launch);

  const std::function<void(const SimEvent&)> on_event = [&](const SimEvent& e) {
    const auto i = static_cast<int32_t>(e.tag);
    if (e.progress) {
      refresh(e.stream);
      return;
    }
    if (!e.timer) refresh(e.stream);  // a pipelined stream's completion delivers its last slices
    if (e.timer) {
      runner.complete(i, e.at, launch);
    } else if (!runner.part_done(i, e.at, launch)) {
      return;
    }
    if (runner.done() && links_failed) sim.stop();  // left: retransmissions and ACKs of finished streams
  };
  if (failures) {
    FailureDriver::Hooks h;
    h.run_until = [&](Time t) { sim.run_until(t, on_event); };
    h.run_to_end = [&] { sim.run(on_event); };
    h.done = [&] { return runner.done(); };
    h.apply = [&](const FailureEvent& ev) {
      for (topology::LinkId l : ev.links) {
        if (ev.action == FailureAction::Down) {
          sim.set_link_dead(l, true);
          links_failed = true;
        } else if (ev.action == FailureAction::Up) {
          sim.set_link_dead(l, false);
          sim.set_link_rate(l, topo_.links[l].capacity);
        } else if (ev.action == FailureAction::Degrade) {
          sim.set_link_rate(l, ev.rate);
        }  // Drain: routing moves the streams off; the link still forwards what reaches it
      }
    };
    std::vector<routing::DirLink> route;
    h.visit_running = [&](const std::function<void(const std::vector<routing::DirLink>&)>& visit) {
      for (int32_t s = 0; s < static_cast<int32_t>(sim.streams().size()); ++s) {
        if (!sim.stream_open(s)) continue;
        sim.stream_route(s, route);
        visit(route);
      }
    };
    h.set_routing = [&](routing::DirLink d, bool up) { sim.set_route_dir_up(d, up); };
    h.reroute = [&](const std::vector<routing::DirLink>& dirs, Time) { return sim.reroute(dirs); };
    driver.run(h);
  }
  if (report.job_failed) sim.stop();  // the run ends at the failure (the driver set the makespan)
  sim.run(on_event);
  if (!report.job_failed) {
    if (sim.open_streams() > 0)
      throw Error(fmt::format("packet engine: {} stream(s) never completed", sim.open_streams()));
    if (!runner.all_launched()) throw Error("packet engine: internal: a transfer never started");
  }

  const std::vector<double> bytes = sim.link_payload_bytes();
  std::vector<double> peak(bytes.size());
  const auto& ps = sim.port_stats();
  const double seconds = report.makespan.seconds();
  for (size_t d = 0; d < bytes.size(); ++d) {
    // in-server links modelled as delays have no windows: their mean is their peak
    const double cap = sim.payload_capacity_bps(static_cast<routing::DirLink>(d));
    const double mean = seconds > 0 && cap > 0 ? bytes[d] * 8.0 / (cap * seconds) : 0;
    peak[d] = std::max(ps[d].peak_utilization, mean);
  }
  report.hottest = hottest_links(bytes, &peak, report.makespan, options_.hottest_links,
                                 [&](routing::DirLink d) { return sim.payload_capacity_bps(d); });
  report.by_class =
      class_loads(topo_, bytes, report.makespan, [&](routing::DirLink d) { return sim.payload_capacity_bps(d); });
  if (options_.observe) {
    RunObservation o;
    o.engine = name();
    o.report = &report;
    o.packet = &sim;
    options_.observe(o);
  }
  return report;
}

}  // namespace podnet::engine::packet
