#include "engine/packet/packet_backend.hpp"

#include <algorithm>
#include <functional>
#include <optional>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/mpi_world.hpp"
#include "engine/failure_driver.hpp"
#include "engine/packet/hop_latency_credit.hpp"
#include "engine/packet/pipeline_tracker.hpp"
#include "engine/packet/slice_pipeline.hpp"
#include "engine/plan_runner.hpp"
#include "engine/report_util.hpp"
#include "routing/router.hpp"

namespace podnet::engine::packet {

PacketOptions default_packet_options(const NetworkOptions& options) {
  PacketOptions p;
  p.cc = options.packet.cc != "auto" ? options.packet.cc : options.transport.default_cc;
  p.pfc = options.packet.pfc;
  p.link_credits = options.packet.link_credits;
  p.link_retry = options.packet.link_retry;
  p.partitioned = options.packet.partitioned;
  p.reorder_nack_packets = options.packet.reorder_nack;
  p.delivery = delivery_from(options.packet.delivery);
  // network.threads 0: this machine's cores (under mpirun, shared by the job's ranks on it).
  p.threads = options.flow.threads > 0 ? options.flow.threads : std::min(mpi::cores_per_rank(), 64);
  p.buffer_bytes = options.packet.switch_buffer;
  p.ecn_kmin = options.packet.ecn_kmin;
  p.ecn_kmax = options.packet.ecn_kmax;
  p.ecn_pmax = options.packet.ecn_pmax;
  p.rto = options.packet.rto;
  if (options.packet.sample_interval.ps > 0) {
    p.sample_interval = options.packet.sample_interval;
    p.sample_all_ports = true;
    p.sample_streams = true;
  }
  return p;
}

PacketBackend::PacketBackend(const topology::Topology& topo, NetworkOptions options)
    : topo_(topo), options_(std::move(options)), packet_(default_packet_options(options_)) {}

PacketBackend::PacketBackend(const topology::Topology& topo, NetworkOptions options, PacketOptions packet)
    : topo_(topo), options_(std::move(options)), packet_(std::move(packet)) {}

namespace {

// One run of a plan on the packet engine: launching transfers as streams,
// the pipelines, the failure hooks and the report (packet_backend.hpp).
class PacketRun {
 public:
  PacketRun(const topology::Topology& topo, const NetworkOptions& options, const char* engine, PacketSim& sim,
            const plan::TransferPlan& plan, RunReport& report)
      : topo_(topo),
        options_(options),
        engine_(engine),
        sim_(sim),
        plan_(plan),
        report_(report),
        runner_(plan, report),  // rejects bad dependencies and cycles up front
        failures_(!options.faults.failures.events.empty()),
        driver_(topo, options.faults.failures, report),
        pipes_(sim),
        credit_(plan, sim) {
    plan::check_pipelines(plan);
    runner_.report_progress(&options_.observers.progress, options_.observers.progress_every);
  }

  // PlanRunner's launch callback (a template argument: no std::function per completion).
  auto launcher() {
    return [this](int32_t i, Time at) { launch(i, at); };
  }

  void run() {
    runner_.start(launcher());
    const std::function<void(const SimEvent&)> on_event = [this](const SimEvent& e) { handle(e); };
    if (failures_) driver_.run(failure_hooks(on_event));
    if (report_.job_failed) sim_.stop();  // the run ends at the failure (the driver set the makespan)
    sim_.run(on_event);
    if (!report_.job_failed) {
      if (sim_.open_streams() > 0)
        throw Error(fmt::format("packet engine: {} never completed",
                                plural(static_cast<int64_t>(sim_.open_streams()), "stream", "streams")));
      if (!runner_.all_launched()) throw Error("packet engine: internal: a transfer never started");
    }
    link_report();
  }

 private:
  void launch(int32_t i, Time at) {
    const plan::Transfer& t = plan_.transfers[static_cast<size_t>(i)];
    if (t.kind == plan::TransferKind::Compute) return launch_compute(i, at);
    const int32_t qps = std::max(1, t.qps);
    SlicePipeline::hops_of(t, hops_);  // in the order its streams are made
    const std::optional<Time> mean_latency = route_hops(i, at, qps);
    if (!mean_latency) return;  // no route: the driver recorded the failure
    const bool piped = t.pipeline.slices > 0 && t.kind != plan::TransferKind::P2p && !hops_.empty();
    const int32_t pipe = piped ? pipes_.open(t, static_cast<int32_t>(hops_.size()), qps) : -1;
    for (size_t h = 0; h < hops_.size(); ++h)
      for (int32_t q = 0; q < qps; ++q) add_stream(i, at, h, q, qps, *mean_latency, pipe);
    if (piped) pipes_.watch(pipe);
    if (runner_.parts_left(i) == 0) sim_.add_timer(at, static_cast<uint64_t>(i));  // nothing to send
  }

  // A delay: a straggler slows it, as on the flow engine; a latency-holding one loses the hops' credit after.
  void launch_compute(int32_t i, Time at) {
    const plan::Transfer& t = plan_.transfers[static_cast<size_t>(i)];
    Time duration = failures_ ? driver_.compute_duration(t.duration, t.ranks) : t.duration;
    if (t.holds_hop_latency) duration = Time(std::max<int64_t>(0, duration.ps - credit_.credit(i)));
    sim_.add_timer(at + duration, static_cast<uint64_t>(i));
  }

  // Routes every (hop, QP) of transfer i into routes_; returns the latency a ring or coupled stream pays
  // (latency_steps x the mean over hops of the mean QP latency). With failures a missing route fails the
  // launch: nothing is returned.
  std::optional<Time> route_hops(int32_t i, Time at, int32_t qps) {
    const plan::Transfer& t = plan_.transfers[static_cast<size_t>(i)];
    routes_.assign(hops_.size() * static_cast<size_t>(qps), {});
    double latency_sum = 0;
    try {
      for (size_t h = 0; h < hops_.size(); ++h)
        for (int32_t q = 0; q < qps; ++q) {
          auto& r = routes_[h * static_cast<size_t>(qps) + static_cast<size_t>(q)];
          const uint64_t base = static_cast<uint64_t>(t.hop_channel(h)) * 1024;
          sim_.route(hops_[h].first, hops_[h].second, base + static_cast<uint64_t>(q), r);
          latency_sum += static_cast<double>(sim_.hop_latency(r).ps) / qps;
        }
    } catch (const Error& e) {
      if (!failures_) throw;
      driver_.fail_launch(at, plan_, i, e.what());
      return std::nullopt;
    }
    const double mean = hops_.empty() ? 0.0 : latency_sum / static_cast<double>(hops_.size());
    return Time(static_cast<int64_t>(mean * std::max(0, t.latency_steps) + 0.5));
  }

  // Stream of hop h, QP q of transfer i (packet_backend.hpp: transfers -> streams).
  void add_stream(int32_t i, Time at, size_t h, int32_t q, int32_t qps, Time mean_latency, int32_t pipe) {
    const plan::Transfer& t = plan_.transfers[static_cast<size_t>(i)];
    const auto& r = routes_[h * static_cast<size_t>(qps) + static_cast<size_t>(q)];
    StreamSpec s;
    s.src = hops_[h].first;
    s.dst = hops_[h].second;
    s.bytes = t.bytes / qps + (q < t.bytes % qps ? 1 : 0);
    if (t.max_rate_bps > 0 && s.bytes > 0)  // each QP of a P2p or of a hop its share (transfer_plan.hpp)
      s.max_rate_bps = t.max_rate_bps * static_cast<double>(s.bytes) / static_cast<double>(t.bytes);
    s.entropy = static_cast<uint64_t>(t.hop_channel(h)) * 1024 + static_cast<uint64_t>(q);
    s.start = at;
    if (failures_) driver_.start_on(r, at, plan_, i);  // on a failed direction: stalls until the first repair
    s.latency = t.kind == plan::TransferKind::P2p ? sim_.hop_latency(r) * std::max(0, t.latency_steps) : mean_latency;
    s.tag = static_cast<uint64_t>(i);
    if (pipe >= 0) {
      s.slices = pipes_.slices(pipe);
      s.send_slices = pipes_.released(pipe, static_cast<int32_t>(h));
    }
    if (options_.observers.on_route) options_.observers.on_route(i, r, static_cast<double>(s.bytes));
    const int32_t id = sim_.add_stream(s, r);
    if (pipe >= 0) pipes_.attach(pipe, id, static_cast<int32_t>(h) * qps + q);
    runner_.add_parts(i, 1);
    ++report_.flows;
  }

  void handle(const SimEvent& e) {
    const auto i = static_cast<int32_t>(e.tag);
    // progress, or a stream's completion (a pipelined one's delivers its last slices)
    if (e.progress || !e.timer) pipes_.refresh(e.stream);
    if (e.progress) return;
    if (e.timer) {
      runner_.complete(i, e.at, launcher());
    } else if (!runner_.part_done(i, e.at, launcher())) {
      return;
    }
    if (runner_.done() && links_failed_) sim_.stop();  // left: retransmissions and ACKs of finished streams
  }

  FailureDriver::Hooks failure_hooks(const std::function<void(const SimEvent&)>& on_event) {
    FailureDriver::Hooks h;
    h.run_until = [this, &on_event](Time t) { sim_.run_until(t, on_event); };
    h.run_to_end = [this, &on_event] { sim_.run(on_event); };
    h.done = [this] { return runner_.done(); };
    h.apply = [this](const FailureEvent& ev) {
      for (topology::LinkId l : ev.links) {
        if (ev.action == FailureAction::Down) {
          sim_.set_link_dead(l, true);
          links_failed_ = true;  // once the job is over, the rest of the run is not simulated
        } else if (ev.action == FailureAction::Up) {
          sim_.set_link_dead(l, false);
          sim_.set_link_rate(l, topo_.links[l].capacity);
        } else if (ev.action == FailureAction::Degrade) {
          sim_.set_link_rate(l, ev.rate);
        }  // Drain: routing moves the streams off; the link still forwards what reaches it
      }
    };
    h.visit_running = [this](const std::function<void(const std::vector<routing::DirLink>&)>& visit) {
      for (int32_t s = 0; s < static_cast<int32_t>(sim_.streams().size()); ++s) {
        if (!sim_.stream_open(s)) continue;
        sim_.stream_route(s, dirs_);
        visit(dirs_);
      }
    };
    h.set_routing = [this](routing::DirLink d, bool up) { sim_.set_route_dir_up(d, up); };
    h.reroute = [this](const std::vector<routing::DirLink>& dirs, Time) { return sim_.reroute(dirs); };
    return h;
  }

  // The hottest links and the load per link class; the observer, if any.
  void link_report() {
    const std::vector<double> bytes = sim_.link_payload_bytes();
    std::vector<double> peak(bytes.size());
    const auto& ps = sim_.port_stats();
    const double seconds = report_.makespan.seconds();
    const auto capacity = [this](routing::DirLink d) { return sim_.payload_capacity_bps(d); };
    for (size_t d = 0; d < bytes.size(); ++d) {
      // in-server links modelled as delays have no windows: their mean is their peak
      const double cap = capacity(static_cast<routing::DirLink>(d));
      const double mean = seconds > 0 && cap > 0 ? bytes[d] * 8.0 / (cap * seconds) : 0;
      peak[d] = std::max(ps[d].peak_utilization, mean);
    }
    report_.hottest = hottest_links(bytes, &peak, report_.makespan, options_.hottest_links, capacity);
    report_.by_class = class_loads(topo_, bytes, report_.makespan, capacity);
    if (options_.observers.observe) {
      RunObservation o;
      o.engine = engine_;
      o.report = &report_;
      o.packet = &sim_;
      options_.observers.observe(o);
    }
  }

  const topology::Topology& topo_;
  const NetworkOptions& options_;
  const char* engine_;
  PacketSim& sim_;
  const plan::TransferPlan& plan_;
  RunReport& report_;
  PlanRunner runner_;
  const bool failures_;
  FailureDriver driver_;
  PipelineTracker pipes_;
  HopLatencyCredit credit_;
  bool links_failed_ = false;  // a link died
  std::vector<std::pair<int32_t, int32_t>> hops_;
  std::vector<std::vector<routing::PathPart>> routes_;
  std::vector<routing::DirLink> dirs_;
};

}  // namespace

RunReport PacketBackend::run(const plan::TransferPlan& plan) {
  sim_ = std::make_unique<PacketSim>(topo_, options_, packet_);
  RunReport report;
  report.engine = name();
  PacketRun(topo_, options_, name(), *sim_, plan, report).run();
  return report;
}

}  // namespace podnet::engine::packet
