#include "reliability/draw.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/error.hpp"

namespace podnet::reliability {

using topology::LinkId;
using topology::Media;
using topology::NodeId;
using topology::NodeKind;

std::string link_label(const topology::Topology& t, LinkId l) {
  const topology::Link& k = t.links[l];
  auto end = [&](NodeId n, int32_t port) {
    return t.nodes[n].kind == NodeKind::Switch ? t.nodes[n].name + ":" + t.port_name(n, port) : t.nodes[n].name;
  };
  return end(k.a, k.port_a) + " <-> " + end(k.b, k.port_b);
}

namespace {

bool network_link(const topology::Topology& t, LinkId l) {
  return t.links[l].media == Media::Copper || t.links[l].media == Media::Optical;
}

engine::FailureEvent event_for(const topology::Topology& t, const ComponentClass& c, int32_t member) {
  engine::FailureEvent ev;
  auto all_links = [&](NodeId n) {
    auto [b, e] = t.incident(n);
    for (const LinkId* p = b; p != e; ++p)
      if (network_link(t, *p)) ev.links.push_back(*p);
  };
  switch (c.part) {
    case Part::Gpu:
    case Part::Software:
      ev.action = engine::FailureAction::Stop;
      ev.gpu = member;
      ev.what = fmt::format("random {} failure: gpu {} ({})", c.part == Part::Gpu ? "GPU" : "software", member,
                            t.nodes[t.gpus[member]].name);
      break;
    case Part::Host: {
      ev.action = engine::FailureAction::Stop;
      const int32_t server = t.nodes[t.gpus[member]].server;
      ev.what = fmt::format("random host failure: server {}", topology::server_name(server, t.servers));
      break;
    }
    case Part::Nic:
      all_links(member);
      ev.what = fmt::format("random NIC failure: {}", t.nodes[member].name);
      break;
    case Part::Switch:
      all_links(member);
      ev.what = fmt::format("random switch failure: {}", t.nodes[member].name);
      break;
    case Part::Optic:
    case Part::CopperCable:
    case Part::OpticalCable:
      ev.links.push_back(member);
      ev.what = fmt::format("random {} failure: link {}", c.label, link_label(t, member));
      break;
  }
  return ev;
}

}  // namespace

std::vector<engine::FailureEvent> draw_failures(const topology::Topology& t, const Inventory& inv, const Config& cfg,
                                                const DrawSpec& spec, Rng& rng) {
  if (!(spec.until > spec.from))
    throw ParamError("until", "the window to draw failures in is empty: expected until > from");
  // Classes to draw from, with their failure rates n·λ (per hour).
  std::vector<const ComponentClass*> classes;
  std::vector<double> cumulative;
  double total = 0;
  for (const auto& c : inv.classes) {
    if (!spec.parts.empty() && std::find(spec.parts.begin(), spec.parts.end(), c.part) == spec.parts.end()) continue;
    const double rate = static_cast<double>(c.count) * cfg.rate(c.part);
    if (!(rate > 0)) continue;
    if (c.members.empty()) throw Error("internal: draw_failures needs an inventory counted with members");
    total += rate;
    classes.push_back(&c);
    cumulative.push_back(total);
  }
  if (classes.empty())
    throw ParamError("parts", "no component of the job in these parts fails (none in the job, or a zero rate)");

  const double window_ps = static_cast<double>(spec.until.ps - spec.from.ps);
  std::vector<engine::FailureEvent> out;
  auto add = [&](Time at) {
    const double u = rng.uniform() * total;
    const size_t i = std::min<size_t>(std::upper_bound(cumulative.begin(), cumulative.end(), u) - cumulative.begin(),
                                      classes.size() - 1);
    const ComponentClass& c = *classes[i];
    engine::FailureEvent ev = event_for(t, c, c.members[rng.below(c.members.size())]);
    ev.at = at;
    out.push_back(std::move(ev));
  };
  if (spec.count >= 0) {
    if (spec.count > kMaxDrawn)
      throw ParamError("random", fmt::format("{} failures is more than one run takes: expected at most {}", spec.count,
                                             kMaxDrawn));
    for (int64_t k = 0; k < spec.count; ++k)
      add(Time(spec.from.ps + static_cast<int64_t>(std::floor(rng.uniform() * window_ps))));
  } else {
    if (!(spec.scale > 0)) throw ParamError("scale", "expected a positive rate multiplier");
    const double per_ps = total * spec.scale / 3600e12;  // failures per picosecond
    const double expected = per_ps * window_ps;
    if (expected > static_cast<double>(kMaxDrawn))
      throw ParamError("scale", fmt::format("the job would see {:.3g} failures in the window at this scale: expected "
                                            "a scale giving at most {}",
                                            expected, kMaxDrawn));
    double at = static_cast<double>(spec.from.ps);
    while (true) {
      at += rng.exponential(per_ps);
      if (!(at < static_cast<double>(spec.until.ps))) break;
      add(Time(static_cast<int64_t>(at)));
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.at < b.at; });
  return out;
}

}  // namespace podnet::reliability
