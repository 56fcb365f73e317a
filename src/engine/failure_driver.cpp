#include "engine/failure_driver.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.hpp"

namespace podnet::engine {

FailureDriver::FailureDriver(const topology::Topology& t, const FailureOptions& options, RunReport& report)
    : t_(t),
      fo_(options),
      report_(report),
      dead_(t.links.size(), 0),
      pending_repair_(2 * t.links.size(), Time::max()),
      pending_event_(2 * t.links.size(), -1),
      slowdown_(t.gpus.size(), 1.0) {
  for (size_t e = 0; e < fo_.events.size(); ++e) actions_.push_back({fo_.events[e].at, 0, static_cast<int32_t>(e), {}});
  std::stable_sort(actions_.begin(), actions_.end(), [](const Action& a, const Action& b) { return a.at < b.at; });
  // Stragglers from time 0 slow the very first compute too.
  for (const auto& ev : fo_.events)
    if (ev.action == FailureAction::Slow && ev.at == Time() && ev.gpu >= 0 &&
        ev.gpu < static_cast<int32_t>(slowdown_.size()))
      slowdown_[ev.gpu] = ev.factor;
}

double FailureDriver::compute_factor(const std::vector<int32_t>& ranks) const {
  double factor = 1.0;
  for (int32_t g : ranks)
    if (g >= 0 && g < static_cast<int32_t>(slowdown_.size())) factor = std::max(factor, slowdown_[g]);
  return factor;
}

void FailureDriver::push(Action a) {
  auto it = std::upper_bound(actions_.begin(), actions_.end(), a.at, [](Time t, const Action& x) { return t < x.at; });
  actions_.insert(it, std::move(a));
}

// Can the switch a dead direction leaves from repair it alone? Yes for an
// uplink (any other uplink of a Clos switch reaches every destination) and
// for a link with a live parallel twin to the same neighbour; otherwise the
// routing protocol must converge upstream. A multi-plane NIC (topology/planes.hpp) repairs its own link into
// a plane alone: its other planes reach every destination.
bool FailureDriver::local(routing::DirLink d) const {
  const topology::NodeId from = routing::dir_from(d, t_), to = routing::dir_to(d, t_);
  if (t_.nic_planes > 1 && t_.nodes[from].kind == topology::NodeKind::Nic &&
      t_.nodes[to].kind == topology::NodeKind::Switch)
    return true;
  if (t_.nodes[from].kind != topology::NodeKind::Switch) return false;
  if (t_.nodes[to].kind == topology::NodeKind::Switch && t_.nodes[to].tier > t_.nodes[from].tier) return true;
  auto [b, e] = t_.incident(from);
  for (auto it = b; it != e; ++it)
    if (*it != routing::link_of(d) && !dead_[*it] && t_.other_end(*it, from) == to) return true;
  return false;
}

void FailureDriver::fail(Time at, std::string why, int32_t transfer) {
  if (report_.job_failed && report_.failed_at <= at) return;
  report_.job_failed = true;
  report_.failed_at = at;
  report_.failure = std::move(why);
  report_.failed_transfer = transfer;
}

std::string FailureDriver::transfer_name(const plan::TransferPlan& plan, int32_t i) {
  const std::string& label = plan.transfers[static_cast<size_t>(i)].label;
  return label.empty() ? fmt::format("transfer {}", i) : label;
}

Time FailureDriver::compute_duration(Time d, const std::vector<int32_t>& ranks) const {
  return slowed_duration(d, compute_factor(ranks));
}

void FailureDriver::fail_launch(Time at, const plan::TransferPlan& plan, int32_t i, const std::string& why) {
  fail(at + fo_.collective_timeout,
       fmt::format("{}: no route after the failures, the collective times out after {} ({})", transfer_name(plan, i),
                   format_time(fo_.collective_timeout), why),
       i);
}

void FailureDriver::start_on(const std::vector<routing::PathPart>& route, Time at, const plan::TransferPlan& plan,
                             int32_t i) {
  routing::DirLink first = -1;
  for (const auto& p : route)
    if (repair_at(p.link) != Time::max() && (first < 0 || repair_at(p.link) < repair_at(first))) first = p.link;
  if (first >= 0) stalled_start(first, at, plan, i);
}

void FailureDriver::stalled_start(routing::DirLink d, Time at, const plan::TransferPlan& plan, int32_t i) {
  const Time repair = pending_repair_[static_cast<size_t>(d)];
  if (repair <= at || repair - at <= fo_.collective_timeout) return;
  const FailureEvent& ev = fo_.events[static_cast<size_t>(pending_event_[static_cast<size_t>(d)])];
  fail(at + fo_.collective_timeout,
       fmt::format("{}: {} started at {} on it and would stall {} until repaired, longer than the collective "
                   "timeout {}",
                   ev.what, transfer_name(plan, i), format_time(at), format_time(repair - at),
                   format_time(fo_.collective_timeout)),
       i);
}

void FailureDriver::run(const Hooks& h) {
  std::vector<int32_t> record_of(fo_.events.size(), -1);  // event -> its entry in report.failures
  auto has = [](const std::vector<routing::DirLink>& v, routing::DirLink d) {
    return std::find(v.begin(), v.end(), d) != v.end();
  };
  // A job failure is decided at failed_at; actions before it still apply (a
  // later event, such as a GPU stopping, can end the job sooner).
  size_t next = 0;
  while (true) {
    const Time limit = next < actions_.size() ? actions_[next].at : Time::max();
    if (report_.job_failed && limit >= report_.failed_at) break;
    if (limit == Time::max()) {
      h.run_to_end();
      if (!report_.job_failed) break;
      continue;  // a transfer found no route: it fails at its timeout
    }
    h.run_until(limit);
    if (report_.job_failed && limit >= report_.failed_at) break;
    const Action a = actions_[next++];
    if (h.done()) break;  // the job is over: later events do not apply
    if (a.kind == 0) {
      const FailureEvent& ev = fo_.events[a.event];
      record_of[a.event] = static_cast<int32_t>(report_.failures.size());
      report_.failures.push_back({a.at, ev.what, 0, Time()});
      if (ev.action == FailureAction::Stop) {
        fail(a.at, fmt::format("{} failed: the job stops (restart from the last checkpoint)", ev.what));
        continue;
      }
      if (ev.action == FailureAction::Slow) {
        if (ev.gpu >= 0 && ev.gpu < static_cast<int32_t>(slowdown_.size())) slowdown_[ev.gpu] = ev.factor;
        continue;
      }
      const bool removed = ev.action == FailureAction::Down || ev.action == FailureAction::Drain;
      for (topology::LinkId l : ev.links) dead_[l] = removed;
      h.apply(ev);
      if (ev.action == FailureAction::Degrade) continue;  // capacity only: routing keeps the links
      std::vector<routing::DirLink> up_dirs, other_dirs;
      for (topology::LinkId l : ev.links)
        for (routing::DirLink d : {2 * l, 2 * l + 1}) (local(d) ? up_dirs : other_dirs).push_back(d);
      std::vector<routing::DirLink> all = up_dirs;
      all.insert(all.end(), other_dirs.begin(), other_dirs.end());
      if (ev.action == FailureAction::Drain) {
        push({a.at, 1, a.event, all});  // planned: routing moves the flows off at once (no stall)
      } else if (ev.action == FailureAction::Down) {
        // Every flow crossing a dead direction stalls until the first repair
        // of a direction it crosses (local: local_repair; else convergence).
        Time worst;
        h.visit_running([&](const std::vector<routing::DirLink>& route) {
          Time repair = Time::max();
          for (routing::DirLink d : route) {
            if (has(up_dirs, d)) repair = std::min(repair, fo_.local_repair);
            else if (has(other_dirs, d)) repair = std::min(repair, fo_.convergence);
          }
          if (repair != Time::max()) worst = std::max(worst, repair);
        });
        if (worst > fo_.collective_timeout) {
          fail(a.at + fo_.collective_timeout,
               fmt::format("{}: traffic would stall {} until repaired, longer than the collective timeout {}", ev.what,
                           format_time(worst), format_time(fo_.collective_timeout)));
          continue;
        }
        // Flows that start on a dead direction before its repair stall too (stalled_start).
        for (routing::DirLink d : up_dirs) {
          pending_repair_[static_cast<size_t>(d)] = a.at + fo_.local_repair;
          pending_event_[static_cast<size_t>(d)] = a.event;
        }
        for (routing::DirLink d : other_dirs) {
          pending_repair_[static_cast<size_t>(d)] = a.at + fo_.convergence;
          pending_event_[static_cast<size_t>(d)] = a.event;
        }
        if (!up_dirs.empty()) push({a.at + fo_.local_repair, 1, a.event, up_dirs});
        if (!other_dirs.empty()) push({a.at + fo_.convergence, 1, a.event, other_dirs});
      } else if (ev.action == FailureAction::Up) {
        for (routing::DirLink d : all) pending_repair_[static_cast<size_t>(d)] = Time::max();  // carries again
        push({a.at + fo_.local_repair, 2, a.event, all});
      }
      continue;
    }
    // Repair: routing forgets (or relearns) the links; flows using a dead direction are re-routed.
    for (routing::DirLink d : a.dirs) {
      h.set_routing(d, a.kind == 2);
      if (a.kind == 1) pending_repair_[static_cast<size_t>(d)] = Time::max();  // routed around from now on
    }
    if (a.kind == 2) continue;
    const FailureEvent& ev = fo_.events[a.event];
    try {
      const int64_t moved = h.reroute(a.dirs, a.at);
      if (moved > 0 && record_of[a.event] >= 0) {
        FailureRecord& rec = report_.failures[record_of[a.event]];
        rec.flows_rerouted += moved;
        rec.repaired = a.at;
      }
    } catch (const Error& e) {
      // Nothing can repair it: the collective library gives up after its timeout.
      fail(ev.at + fo_.collective_timeout, fmt::format("{}: no route left, the collective times out after {} ({})",
                                                       ev.what, format_time(fo_.collective_timeout), e.what()));
    }
  }
  if (report_.job_failed) report_.makespan = report_.failed_at;  // the job stopped there
}

}  // namespace podnet::engine
