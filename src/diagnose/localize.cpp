#include "diagnose/localize.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "routing/route.hpp"

namespace podnet::diagnose {

using topology::NodeId;

std::string Incidence::name(const topology::Topology& t, int32_t c) const {
  if (c < dirs) {
    const NodeId from = routing::dir_from(c, t), to = routing::dir_to(c, t);
    const auto& l = t.links[routing::link_of(c)];
    const int32_t port = l.a == from ? l.port_a : l.port_b;
    return fmt::format("{}:{} -> {}", t.nodes[from].name, t.port_name(from, port), t.nodes[to].name);
  }
  return t.nodes[c - dirs].name;
}

Incidence incidence_of(const topology::Topology& t, const Mesh& mesh) {
  Incidence inc;
  inc.dirs = static_cast<int32_t>(2 * t.links.size());
  inc.components = inc.dirs + static_cast<int32_t>(t.nodes.size());
  inc.offset.reserve(mesh.tuples.size() + 1);
  inc.offset.push_back(0);
  std::vector<std::pair<int32_t, float>> parts;
  for (const Tuple& tu : mesh.tuples) {
    parts.clear();
    for (int32_t k = tu.path_begin; k < tu.path_end; ++k) {
      const auto d = mesh.links[k];
      parts.emplace_back(d, 1.0f);
      const NodeId x = switch_entered(t, d);
      if (x != topology::kNone) parts.emplace_back(inc.dirs + x, 1.0f);
    }
    std::sort(parts.begin(), parts.end());
    size_t w = 0;  // merge repeats (a switch crossed going and coming back counts twice)
    for (size_t r = 0; r < parts.size(); ++r) {
      if (w > 0 && parts[w - 1].first == parts[r].first) parts[w - 1].second += parts[r].second;
      else parts[w++] = parts[r];
    }
    parts.resize(w);
    for (const auto& [c, a] : parts) {
      inc.component.push_back(c);
      inc.weight.push_back(a);
    }
    inc.offset.push_back(static_cast<int32_t>(inc.component.size()));
    inc.hops.push_back(static_cast<float>(tu.path_end - tu.path_begin));
  }
  return inc;
}

namespace {

struct Hit {
  int32_t lossy;  // index into the lossy tuples
  float a;
};

// p-value of a likelihood gain G for one rate on its boundary: erfc(sqrt(G)) / 2.
double p_value(double gain) { return gain <= 0 ? 1.0 : 0.5 * std::erfc(std::sqrt(gain)); }

}  // namespace

Localization localize(const Incidence& inc, const std::vector<int64_t>& sent, const std::vector<int64_t>& lost,
                      const LocalizeOptions& o) {
  Localization out;
  out.dirs = inc.dirs;
  const size_t T = inc.hops.size();
  // Exposure of every component and of the background.
  std::vector<double> exposure(inc.components, 0.0);
  double H = 0;
  std::vector<int32_t> lossy;  // tuple ids with k > 0
  for (size_t i = 0; i < T; ++i) {
    const auto n = static_cast<double>(sent[i]);
    out.sent += sent[i];
    out.lost += lost[i];
    H += n * inc.hops[i];
    for (int32_t p = inc.offset[i]; p < inc.offset[i + 1]; ++p) exposure[inc.component[p]] += n * inc.weight[p];
    if (lost[i] > 0) lossy.push_back(static_cast<int32_t>(i));
  }
  for (double e : exposure) out.tested += e > 0 ? 1 : 0;
  if (out.lost == 0 || H <= 0) return out;
  const double C = std::max(1, out.tested);
  const double entry_gain = [&] {  // the smallest G with C p(G) < alpha, by bisection
    double lo = 0, hi = 1e3;
    for (int it = 0; it < 200; ++it) {
      const double mid = 0.5 * (lo + hi);
      (C * p_value(mid) < o.alpha ? hi : lo) = mid;
    }
    return hi;
  }();

  // The lossy tuples' components, and per component its hits (lossy tuple, weight).
  const size_t L = lossy.size();
  std::vector<double> k(L), h(L), mu(L);
  std::vector<std::pair<int32_t, Hit>> pairs;
  for (size_t j = 0; j < L; ++j) {
    const int32_t i = lossy[j];
    k[j] = static_cast<double>(lost[i]);
    h[j] = inc.hops[i];
    for (int32_t p = inc.offset[i]; p < inc.offset[i + 1]; ++p)
      pairs.push_back({inc.component[p], Hit{static_cast<int32_t>(j), inc.weight[p]}});
  }
  std::stable_sort(pairs.begin(), pairs.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<int32_t> cand;         // candidate components, ascending
  std::vector<int32_t> cand_off{0};  // into hits
  std::vector<Hit> hits;
  for (size_t p = 0; p < pairs.size(); ++p) {
    if (p == 0 || pairs[p].first != pairs[p - 1].first) {
      if (p > 0) cand_off.push_back(static_cast<int32_t>(hits.size()));
      cand.push_back(pairs[p].first);
    }
    hits.push_back(pairs[p].second);
  }
  cand_off.push_back(static_cast<int32_t>(hits.size()));
  pairs.clear();
  pairs.shrink_to_fit();

  double b = static_cast<double>(out.lost) / H;
  std::vector<int32_t> S;    // indices into cand
  std::vector<double> rate;  // l_e of S
  const auto recompute_mu = [&] {
    for (size_t j = 0; j < L; ++j) mu[j] = b * h[j];
    for (size_t s = 0; s < S.size(); ++s)
      for (int32_t q = cand_off[S[s]]; q < cand_off[S[s] + 1]; ++q) mu[hits[q].lossy] += hits[q].a * rate[s];
  };
  // Best rate and gain of candidate c given mu.
  const auto best = [&](int32_t c, double& l) {
    const double E = exposure[cand[c]];
    l = 0;
    if (E <= 0) return 0.0;
    const auto g = [&](double x, double* dg) {
      double v = 0, dv = 0;
      for (int32_t q = cand_off[c]; q < cand_off[c + 1]; ++q) {
        const double den = mu[hits[q].lossy] + hits[q].a * x;
        v += k[hits[q].lossy] * hits[q].a / den;
        dv -= k[hits[q].lossy] * hits[q].a * hits[q].a / (den * den);
      }
      if (dg) *dg = dv;
      return v - E;
    };
    if (g(0, nullptr) <= 0) return 0.0;
    for (int it = 0; it < 60; ++it) {
      double dg = 0;
      const double v = g(l, &dg);
      if (!(dg < 0)) break;
      const double next = l - v / dg;
      if (!(next > l)) break;
      const bool done = next - l <= 1e-12 * next;
      l = next;
      if (done) break;
    }
    double gain = -l * E;
    for (int32_t q = cand_off[c]; q < cand_off[c + 1]; ++q)
      gain += k[hits[q].lossy] * std::log1p(hits[q].a * l / mu[hits[q].lossy]);
    return gain;
  };
  // Likelihood lost if member s were removed (others fixed).
  const auto removal_cost = [&](size_t s) {
    const int32_t c = S[s];
    double cost = -rate[s] * exposure[cand[c]];
    for (int32_t q = cand_off[c]; q < cand_off[c + 1]; ++q) {
      const double m = mu[hits[q].lossy], without = m - hits[q].a * rate[s];
      cost += k[hits[q].lossy] * std::log(m / std::max(without, 1e-300));
    }
    return cost;
  };
  // Log-likelihood up to a constant: sum_lossy k ln mu - (b H + sum_S l_e E_e) (mu current).
  const auto loglik = [&] {
    double ll = -b * H;
    for (size_t s = 0; s < S.size(); ++s) ll -= rate[s] * exposure[cand[S[s]]];
    for (size_t j = 0; j < L; ++j) ll += k[j] * std::log(std::max(mu[j], 1e-300));
    return ll;
  };
  const auto refit = [&] {
    for (int it = 0; it < 200; ++it) {
      recompute_mu();
      double sb = 0;
      for (size_t j = 0; j < L; ++j) sb += k[j] * h[j] / mu[j];
      std::vector<double> next(S.size());
      for (size_t s = 0; s < S.size(); ++s) {
        double acc = 0;
        for (int32_t q = cand_off[S[s]]; q < cand_off[S[s] + 1]; ++q)
          acc += k[hits[q].lossy] * hits[q].a / mu[hits[q].lossy];
        next[s] = rate[s] * acc / exposure[cand[S[s]]];
      }
      double change = std::abs(b * sb / H - b) / std::max(b, 1e-300);
      b = b * sb / H;
      for (size_t s = 0; s < S.size(); ++s) {
        change = std::max(change, std::abs(next[s] - rate[s]) / std::max(rate[s], 1e-300));
        rate[s] = next[s];
      }
      if (change < 1e-9) break;
    }
    recompute_mu();
  };

  std::vector<char> in_s(cand.size(), 0), banned(cand.size(), 0);
  recompute_mu();
  while (static_cast<int>(S.size()) < o.max_suspects) {
    int32_t pick = -1;
    double pick_gain = 0, pick_rate = 0;
    for (int32_t c = 0; c < static_cast<int32_t>(cand.size()); ++c) {
      if (in_s[c] || banned[c]) continue;
      double l = 0;
      const double g = best(c, l);
      if (g > pick_gain * (1 + 1e-12)) {
        pick = c;
        pick_gain = g;
        pick_rate = l;
      }
    }
    if (pick < 0) break;
    // The test uses the whole likelihood after the joint refit (b gives back the losses it had absorbed),
    // so it is not understated when the background soaked up a fault's losses.
    const double before = loglik();
    const double b_before = b;
    S.push_back(pick);
    rate.push_back(pick_rate);
    in_s[pick] = 1;
    refit();
    if (loglik() - before < entry_gain) {
      S.pop_back();
      rate.pop_back();
      in_s[pick] = 0;
      b = b_before;
      recompute_mu();
      break;
    }
    // Prune members the others now explain (never the one just added, so the loop advances).
    for (;;) {
      size_t worst = S.size();
      double worst_cost = entry_gain;
      for (size_t s = 0; s + 1 < S.size(); ++s) {
        const double cost = removal_cost(s);
        if (cost < worst_cost) {
          worst_cost = cost;
          worst = s;
        }
      }
      if (worst == S.size()) break;
      banned[S[worst]] = 1;
      in_s[S[worst]] = 0;
      S.erase(S.begin() + static_cast<std::ptrdiff_t>(worst));
      rate.erase(rate.begin() + static_cast<std::ptrdiff_t>(worst));
      refit();
    }
  }
  out.background = b;
  for (size_t s = 0; s < S.size(); ++s) {
    Suspect x;
    x.component = cand[S[s]];
    x.loss = rate[s];
    x.exposure = exposure[x.component];
    x.lost = rate[s] * x.exposure;
    x.confidence = std::clamp(1.0 - C * p_value(removal_cost(s)), 0.0, 1.0);
    // Ties: other candidates with exactly the same hits and exposure.
    for (int32_t c = 0; c < static_cast<int32_t>(cand.size()); ++c) {
      if (c == S[s] || exposure[cand[c]] != x.exposure) continue;
      const int32_t n = cand_off[c + 1] - cand_off[c];
      if (n != cand_off[S[s] + 1] - cand_off[S[s]]) continue;
      bool same = true;
      for (int32_t q = 0; q < n && same; ++q) {
        const Hit& u = hits[cand_off[c] + q];
        const Hit& v = hits[cand_off[S[s]] + q];
        same = u.lossy == v.lossy && u.a == v.a;
      }
      if (same) {
        ++x.tied;
        if (x.alike.size() < 8) x.alike.push_back(cand[c]);
      }
    }
    out.suspects.push_back(x);
  }
  std::sort(out.suspects.begin(), out.suspects.end(), [](const Suspect& a, const Suspect& b) {
    if (a.confidence != b.confidence) return a.confidence > b.confidence;
    if (a.lost != b.lost) return a.lost > b.lost;
    return a.component < b.component;
  });
  return out;
}

}  // namespace podnet::diagnose

namespace podnet::diagnose {

std::vector<double> component_costs(const topology::Topology& t, const Incidence& inc, int64_t probe_bytes) {
  std::vector<double> c(inc.components, 0.0);
  for (int32_t d = 0; d < inc.dirs; ++d) {
    const auto& l = t.links[routing::link_of(d)];
    c[d] = l.latency.seconds() + static_cast<double>(probe_bytes) * 8 / l.capacity.bps;
  }
  for (int32_t n = 0; n < static_cast<int32_t>(t.nodes.size()); ++n)
    if (t.nodes[n].kind == topology::NodeKind::Switch) c[inc.dirs + n] = t.switch_latency.seconds();
  return c;
}

DelayLocalization localize_delay(const Incidence& inc, const std::vector<double>& cost,
                                 const std::vector<double>& rtt_s, double threshold_s) {
  DelayLocalization out;
  const size_t T = inc.hops.size();
  std::vector<double> excess(T, -1);
  std::vector<char> slow(T, 0), cleared(inc.components, 0);
  for (size_t i = 0; i < T; ++i) {
    if (rtt_s[i] < 0) continue;
    double base = 0;
    for (int32_t p = inc.offset[i]; p < inc.offset[i + 1]; ++p) base += inc.weight[p] * cost[inc.component[p]];
    excess[i] = rtt_s[i] - base;
    if (excess[i] > threshold_s) {
      slow[i] = 1;
      ++out.slow;
    } else if (excess[i] < threshold_s / 2) {
      ++out.clean;
      for (int32_t p = inc.offset[i]; p < inc.offset[i + 1]; ++p)
        if (inc.weight[p] >= 0.999f) cleared[inc.component[p]] = 1;
    }
  }
  if (out.slow == 0) return out;
  // Uncleared components and the slow tuples through them (ascending ids).
  std::vector<std::pair<int32_t, int32_t>> pairs;  // (component, tuple)
  for (size_t i = 0; i < T; ++i)
    if (slow[i])
      for (int32_t p = inc.offset[i]; p < inc.offset[i + 1]; ++p)
        if (inc.weight[p] >= 0.999f && !cleared[inc.component[p]])
          pairs.emplace_back(inc.component[p], static_cast<int32_t>(i));
  std::sort(pairs.begin(), pairs.end());
  std::vector<int32_t> cand, off{0}, tuples;
  for (size_t k = 0; k < pairs.size(); ++k) {
    if (k == 0 || pairs[k].first != pairs[k - 1].first) {
      if (k > 0) off.push_back(static_cast<int32_t>(tuples.size()));
      cand.push_back(pairs[k].first);
    }
    tuples.push_back(pairs[k].second);
  }
  off.push_back(static_cast<int32_t>(tuples.size()));
  std::vector<char> covered(T, 0), used(cand.size(), 0);
  int64_t left = out.slow;
  while (left > 0) {
    int32_t best = -1;
    int64_t best_n = 0;
    for (int32_t c = 0; c < static_cast<int32_t>(cand.size()); ++c) {
      if (used[c]) continue;
      int64_t n = 0;
      for (int32_t q = off[c]; q < off[c + 1]; ++q) n += covered[tuples[q]] ? 0 : 1;
      if (n > best_n) {
        best = c;
        best_n = n;
      }
    }
    if (best < 0) break;
    used[best] = 1;
    DelaySuspect s;
    s.component = cand[best];
    s.slow_tuples = off[best + 1] - off[best];
    s.rtt_added_s = 1e300;
    for (int32_t q = off[best]; q < off[best + 1]; ++q) {
      s.rtt_added_s = std::min(s.rtt_added_s, excess[tuples[q]]);
      if (!covered[tuples[q]]) {
        covered[tuples[q]] = 1;
        --left;
      }
    }
    for (int32_t c = 0; c < static_cast<int32_t>(cand.size()); ++c) {
      if (c == best || off[c + 1] - off[c] != off[best + 1] - off[best]) continue;
      if (std::equal(tuples.begin() + off[c], tuples.begin() + off[c + 1], tuples.begin() + off[best])) {
        ++s.tied;
        if (s.alike.size() < 8) s.alike.push_back(cand[c]);
      }
    }
    out.suspects.push_back(s);
  }
  out.unexplained = left;
  return out;
}

}  // namespace podnet::diagnose
