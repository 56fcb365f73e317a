// FailureDriver: the failure schedule shared by the engines that simulate
// time passing (flow, packet): injected events in time order, the repairs
// they schedule, stragglers, and the job-failure rules of failures.hpp
// (FailureOptions), with the report's records. What a failure does to links,
// flows or packets is the engine's, supplied through Hooks; hooks run once
// per action, never per packet or per flow event.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "engine/backend.hpp"
#include "plan/transfer_plan.hpp"
#include "routing/route.hpp"
#include "topology/topology.hpp"

namespace podnet::engine {

class FailureDriver {
 public:
  struct Hooks {
    std::function<void(Time)> run_until;  // process every engine event at or before t
    std::function<void()> run_to_end;     // until nothing is left to do
    std::function<bool()> done;           // every transfer has finished
    // Down/Up/Degrade/Drain: change what the links carry (the driver handles routing and repairs).
    std::function<void(const FailureEvent&)> apply;
    // Calls `visit` once per running flow (or QP) with the directed links it uses.
    std::function<void(const std::function<void(const std::vector<routing::DirLink>&)>& visit)> visit_running;
    // Routing learns (up) or forgets one direction of a link.
    std::function<void(routing::DirLink, bool up)> set_routing;
    // Re-routes every running flow that uses one of `dirs`, at `at`; returns how
    // many moved. Throws Error when a flow has no route left.
    std::function<int64_t(const std::vector<routing::DirLink>& dirs, Time at)> reroute;
  };

  FailureDriver(const topology::Topology& t, const FailureOptions& options, RunReport& report);

  // How a transfer is named in failure texts: its label, else "transfer i".
  static std::string transfer_name(const plan::TransferPlan& plan, int32_t i);
  // A compute's duration `d` on `ranks` starting now: d x the slowest
  // straggler's factor of the lockstep group (1 when none), rounded.
  Time compute_duration(Time d, const std::vector<int32_t>& ranks) const;
  // Transfer i of `plan` found no route when it started: the collective
  // cannot connect and the job fails when it times out (at +
  // collective_timeout). `why` is the routing error.
  void fail_launch(Time at, const plan::TransferPlan& plan, int32_t i, const std::string& why);
  // When routing repairs direction `d`, which failed: Time::max() when it
  // did not fail or is repaired already (one load).
  Time repair_at(routing::DirLink d) const { return pending_repair_[static_cast<size_t>(d)]; }
  // A flow (or QP) of transfer i starting at `at` on `route`: if the route
  // crosses failed directions it stalls until the first of their repairs
  // (once moved off one dead direction it leaves the others, as run() does
  // for running flows); a stall longer than the collective timeout fails
  // the job at at + timeout.
  void start_on(const std::vector<routing::PathPart>& route, Time at, const plan::TransferPlan& plan, int32_t i);
  // Runs the engine through every action. On return, report.job_failed says
  // whether the job stopped (report.makespan is then failed_at).
  void run(const Hooks& hooks);

 private:
  struct Action {
    Time at;
    int kind;  // 0 event, 1 repair (reroute), 2 rejoin (a link back up)
    int32_t event;
    std::vector<routing::DirLink> dirs;
  };
  void push(Action a);
  bool local(routing::DirLink d) const;
  void fail(Time at, std::string why, int32_t transfer = -1);  // the earliest reason wins
  // Transfer i of `plan` starting at `at` on direction `d`, which failed.
  void stalled_start(routing::DirLink d, Time at, const plan::TransferPlan& plan, int32_t i);
  double compute_factor(const std::vector<int32_t>& ranks) const;  // the slowest straggler's (1 when none)

  const topology::Topology& t_;
  const FailureOptions& fo_;
  RunReport& report_;
  std::vector<Action> actions_;
  std::vector<char> dead_;              // by link
  std::vector<Time> pending_repair_;    // by direction: when routing repairs a failed one (Time::max(): none pending)
  std::vector<int32_t> pending_event_;  // by direction: the event that failed it
  std::vector<double> slowdown_;        // by GPU rank
};

}  // namespace podnet::engine
