#include "study/calibrate.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <map>
#include <sstream>

#include "collective/collective.hpp"
#include "collective/nccl/tuner.hpp"
#include "core/error.hpp"
#include "core/units.hpp"
#include "engine/network_params.hpp"
#include "engine/registry.hpp"
#include "scenario/scenario.hpp"
#include "scenario/setup.hpp"

namespace podnet::study {

namespace {

// nccl-tests program name -> podnet op name.
const std::map<std::string, std::string>& test_ops() {
  static const std::map<std::string, std::string> k = {
      {"all_reduce", "allreduce"}, {"all_gather", "allgather"}, {"reduce_scatter", "reducescatter"},
      {"alltoall", "alltoall"},    {"broadcast", "broadcast"},  {"reduce", "reduce"},
      {"sendrecv", "sendrecv"}};
  return k;
}

std::vector<std::string> numeric_keys() {
  std::vector<std::string> keys;
  for (const auto& s : scenario::sections())
    for (const auto& p : s.params())
      if (p.type == ParamType::Bandwidth || p.type == ParamType::Time || p.type == ParamType::Real)
        keys.push_back(std::string(s.name) + "." + p.name);
  return keys;
}

const ParamSpec* find_spec(const std::string& key) {
  static std::vector<std::pair<std::string, ParamSpec>> all = [] {
    std::vector<std::pair<std::string, ParamSpec>> v;
    for (const auto& s : scenario::sections())
      for (const auto& p : s.params()) v.push_back({std::string(s.name) + "." + p.name, p});
    return v;
  }();
  for (const auto& [k, spec] : all)
    if (k == key) return &spec;
  return nullptr;
}

double si_of(const ParamValue& v) {
  if (const auto* b = std::get_if<Bandwidth>(&v)) return b->bps;
  if (const auto* t = std::get_if<Time>(&v)) return t->seconds();
  if (const auto* d = std::get_if<double>(&v)) return *d;
  if (const auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  return 0;
}

// Scenario syntax for an SI value of a key's type (exact enough to round-trip: ps, 1e-6 Gbps).
std::string text_of(ParamType type, double v) {
  if (type == ParamType::Bandwidth) return fmt::format("{:.6f}Gbps", v / 1e9);
  if (type == ParamType::Time) return fmt::format("{:.6f}us", static_cast<double>(std::llround(v * 1e12)) / 1e6);
  return fmt::format("{:.9g}", v);
}

double parse_bound(const std::string& key, const ParamSpec& spec, const std::string& text) {
  std::string canonical, expected;
  auto v = parse_param(spec, text, canonical, expected);
  if (!v) throw InputError(fmt::format("--fit {}: bound '{}' is not valid: expected {}", key, text, expected));
  return si_of(*v);
}

}  // namespace

FittedKey fit_key(const std::string& fit, const scenario::Scenario& sc, std::optional<double> start) {
  const auto eq = fit.find('=');
  const std::string key = fit.substr(0, eq);
  const ParamSpec* spec = find_spec(key);
  if (!spec ||
      !(spec->type == ParamType::Bandwidth || spec->type == ParamType::Time || spec->type == ParamType::Real)) {
    const auto keys = numeric_keys();
    const std::string hint = scenario::closest(key, keys);
    throw InputError(fmt::format("--fit {}: {}{}; expected a bandwidth, time or real scenario key: {}", key,
                                 spec ? "not a bandwidth, time or real key" : "unknown key",
                                 hint.empty() ? "" : " (did you mean '" + hint + "'?)", fmt::join(keys, ", ")));
  }
  FittedKey k;
  k.key = key;
  k.type = spec->type;
  const std::string section = key.substr(0, key.find('.'));
  const std::string name = key.substr(key.find('.') + 1);
  const Params& p = sc.section(section);
  bool have_start = true;
  if (p.has(name)) {
    if (spec->type == ParamType::Bandwidth) k.start = p.get_bandwidth(name).bps;
    else if (spec->type == ParamType::Time) k.start = p.get_time(name).seconds();
    else k.start = p.get_real(name);
  } else if (key == "network.stack_latency") {
    k.start = engine::network_options_from(sc.section("network"), sc.seed).transport.stack_latency.seconds();
  } else if (start) {
    k.start = *start;
  } else {
    have_start = false;
  }
  if (eq != std::string::npos) {
    const std::string range = fit.substr(eq + 1);
    const auto colon = range.find(':');
    if (colon == std::string::npos)
      throw InputError(fmt::format("--fit {}: expected KEY=LO:HI (e.g. server.nic_speed=100Gbps:800Gbps)", fit));
    k.lo = parse_bound(key, *spec, range.substr(0, colon));
    k.hi = parse_bound(key, *spec, range.substr(colon + 1));
    if (!(k.lo < k.hi)) throw InputError(fmt::format("--fit {}: the lower bound must be below the upper one", fit));
  } else {
    if (!have_start)
      throw InputError(fmt::format("--fit {}: the scenario gives this key no value to start from; give its range "
                                   "(--fit {}=LO:HI)",
                                   key, key));
    const double s = k.start;
    if (spec->type == ParamType::Bandwidth) k.lo = s / 8, k.hi = s * 2;
    else if (spec->type == ParamType::Time) k.lo = s > 0 ? s / 20 : 0, k.hi = s > 0 ? s * 20 : 50e-6;
    else k.lo = s > 0 ? s / 4 : s * 4, k.hi = s > 0 ? s * 4 : s / 4;
    if (spec->type == ParamType::Real) {
      k.lo = std::max(k.lo, spec->min);
      k.hi = std::min(k.hi, spec->max);
      k.hi_is_limit = k.hi == spec->max;
    }
    if (!(k.lo < k.hi))
      throw InputError(
          fmt::format("--fit {}: no default range around {} (give one: --fit {}=LO:HI)", key, k.start, key));
  }
  if (!have_start) k.start = k.lo > 0 ? std::sqrt(k.lo * k.hi) : (k.lo + k.hi) / 2;
  k.start = std::clamp(k.start, k.lo, k.hi);
  k.value = k.start;
  k.start_text = text_of(k.type, k.start);
  k.lo_text = text_of(k.type, k.lo);
  k.hi_text = text_of(k.type, k.hi);
  return k;
}

std::string fit_value_text(const FittedKey& k, double v) { return text_of(k.type, v); }

const ParamSpec* find_param_spec(const std::string& key) { return find_spec(key); }

namespace {

struct Probe {
  collective::Op op;
  std::string algo;
  std::string log_algos, log_protos;  // the log's NCCL_ALGO / NCCL_PROTO, when podnet applies them (else "")
  collective::Group group;
  std::vector<Bytes> sizes;
  std::vector<double> log_seconds;
  std::vector<int> lines;
};

// One evaluation: the scenario with the knob values, every probe's times in seconds.
class Evaluator {
 public:
  Evaluator(const CalibrationInput& in, const std::vector<FittedKey>& keys, const std::vector<Probe>& probes)
      : in_(in), keys_(keys), probes_(probes) {}

  std::vector<std::vector<double>> times(const std::vector<double>& x) {
    std::vector<std::string> sets = in_.sets;
    if (!in_.engine.empty()) sets.push_back("network.engine=" + in_.engine);
    for (size_t i = 0; i < keys_.size(); ++i) sets.push_back(keys_[i].key + "=" + text_of(keys_[i].type, x[i]));
    // The scenario as `podnet bench` resolves it (links: included), timed with the collective options bench
    // runs by default: the scenario's collective: section (NCCL's tuner, channels auto) unless --set says
    // otherwise, so a log bench wrote fits back. --set collective.nccl_model=false fits the plain algorithm.
    const scenario::Setup s = scenario::resolve(scenario::load(in_.scenario, sets, in_.fragments));
    const topology::Topology& topo = s.fabric;
    const collective::Options& copt = s.collective;
    auto backend = engine::make_backend(s.engine, topo, s.network);
    std::vector<std::vector<double>> out;
    chosen.clear();
    for (const auto& p : probes_) {
      collective::Options o = copt;
      if (!p.log_algos.empty()) o.selection = collective::parse_algorithms(p.log_algos, o.selection, "NCCL_ALGO");
      if (!p.log_protos.empty()) o.selection = collective::parse_protocols(p.log_protos, o.selection, "NCCL_PROTO");
      std::vector<double> t;
      std::vector<std::pair<std::string, std::string>> c;
      for (Bytes b : p.sizes) {
        const plan::TransferPlan plan = collective::make_plan(p.algo, p.op, p.group, b, o, topo);
        c.emplace_back(plan.algorithm, plan.protocol);
        t.push_back(backend->run(plan).makespan.seconds());
      }
      out.push_back(std::move(t));
      chosen.push_back(std::move(c));
    }
    ++evaluations;
    return out;
  }

  // F(x) = sum of (t_log / t_podnet - 1)^2; values the scenario refuses (a NIC faster than the switch port)
  // count as infinitely bad, so the search stays inside the valid region.
  double objective(const std::vector<double>& x) {
    std::vector<std::vector<double>> t;
    try {
      t = times(x);
    } catch (const InputError&) {
      ++refused;
      return std::numeric_limits<double>::infinity();
    }
    double f = 0;
    for (size_t i = 0; i < probes_.size(); ++i)
      for (size_t k = 0; k < t[i].size(); ++k) {
        const double r = t[i][k] > 0 ? probes_[i].log_seconds[k] / t[i][k] - 1 : 1e6;
        f += r * r;
      }
    return f;
  }

  int evaluations = 0;
  int refused = 0;
  // Per probe and size, the (algorithm, protocol) of the last times() call's plans.
  std::vector<std::vector<std::pair<std::string, std::string>>> chosen;

 private:
  const CalibrationInput& in_;
  const std::vector<FittedKey>& keys_;
  const std::vector<Probe>& probes_;
};

bool log_space(const FittedKey& k) { return k.lo > 0; }

bool at_bound(const FittedKey& k, bool* low = nullptr) {
  const double a = to_u(k, k.lo), b = to_u(k, k.hi), u = to_u(k, k.value);
  if (low) *low = u - a <= 1e-3 * (b - a);
  return u - a <= 1e-3 * (b - a) || b - u <= 1e-3 * (b - a);
}

// k ended on an upper bound that is the key's own limit.
bool at_upper_limit(const FittedKey& k) {
  bool low = false;
  return k.hi_is_limit && at_bound(k, &low) && !low;
}

// NCCL_ALGO's names as podnet's ("RING" -> "ring", "NVLSTree" -> "nvls_tree"), each enabled one, in podnet's
// order; "" for an empty list.
std::vector<std::string> algorithms_of(const std::string& nccl_algo) {
  const collective::Selection sel = collective::parse_algorithms(nccl_algo, {}, "NCCL_ALGO");
  std::vector<std::string> out;
  for (int i = 0; i < collective::kNumAlgos; ++i)
    if (sel.algos[static_cast<size_t>(i)]) out.emplace_back(collective::algo_name(static_cast<collective::Algo>(i)));
  return out;
}

// Calibration::doubts: whether the fit is trusted, and if not, why and the likely causes.
// `moved[i]`: key i changed some time of the logs (a key that changed none is noted, not judged).
void judge(Calibration& c, int gpus_per_server, const std::vector<bool>& moved) {
  std::vector<std::string> why;
  size_t effective = 0, bounded = 0;
  std::vector<std::string> bound_keys;
  for (size_t i = 0; i < c.keys.size(); ++i) {
    bool low = false;
    const FittedKey& k = c.keys[i];
    if (!moved[i]) continue;  // changed no time: noted, its value the start's
    ++effective;
    if (c.rms_fit >= kExactFitRms && at_bound(k, &low)) {
      ++bounded;
      bound_keys.push_back(fmt::format("{} at its {} bound {}{}", k.key, low ? "lower" : "upper",
                                       low ? k.lo_text : k.hi_text,
                                       !low && k.hi_is_limit ? ", the largest value it takes" : ""));
    }
  }
  if (effective > 0 && bounded == effective)
    why.push_back(fmt::format("every fitted key ended on a bound ({}): the logs want values the bounds exclude",
                              fmt::join(bound_keys, ", ")));
  if (c.rms_fit > kMaxTrustedRms)
    why.push_back(fmt::format("the rms residual is {:.1f}%, above the {:.0f}% a calibration is trusted at",
                              100 * c.rms_fit, 100 * kMaxTrustedRms));
  if (why.empty()) return;
  c.doubts = why;
  // Likely causes, most specific first. One row far off the others (a glitch of the run: a 32-byte all-reduce
  // at 68 us) can carry the whole residual: name it when the rest would be trusted without it.
  if (c.rms_fit > kMaxTrustedRms && c.rows.size() > 2) {
    size_t worst = 0;
    double sum = 0;
    for (size_t i = 0; i < c.rows.size(); ++i) {
      const double e = c.rows[i].ratio - 1;
      sum += e * e;
      if (std::abs(e) > std::abs(c.rows[worst].ratio - 1)) worst = i;
    }
    const double e = c.rows[worst].ratio - 1;
    const double rest = std::sqrt((sum - e * e) / static_cast<double>(c.rows.size() - 1));
    if (rest <= kMaxTrustedRms) {
      const SizeResidual& r = c.rows[worst];
      c.doubts.push_back(fmt::format("likely cause: one row, {} bytes at {}:{}, is far off the others (podnet's busbw "
                                     "{:.2f}x the log's, {:.2f} us logged); without it the rms is {:.1f}%: if that "
                                     "run was disturbed, remove its line and calibrate again",
                                     thousands(r.bytes), c.logs[r.log].source, r.line, r.ratio, r.log_time_us,
                                     100 * rest));
    }
  }
  for (size_t li = 0; li < c.logs.size(); ++li) {
    const LogSetup& l = c.logs[li];
    std::map<std::string, int> timed;  // algorithm -> sizes
    int sizes = 0;
    for (const auto& r : c.rows)
      if (r.log == li) ++timed[r.algorithm], ++sizes;
    std::vector<std::string> timed_text;
    for (const auto& [a, n] : timed) timed_text.push_back(fmt::format("{} at {} of {} sizes", a, n, sizes));
    if (!l.log_algo.empty()) {
      const auto want = algorithms_of(l.log_algo);
      std::vector<std::string> other;
      for (const auto& [a, n] : timed)
        if (std::find(want.begin(), want.end(), a) == want.end()) other.push_back(a);
      if (!other.empty())
        c.doubts.push_back(fmt::format("likely cause: {} ran NCCL_ALGO={} but podnet timed {} (the scenario or --set "
                                       "chose collective.algorithms; the log's was not applied)",
                                       l.source, l.log_algo, fmt::join(timed_text, ", ")));
    } else if (!timed.empty()) {
      c.doubts.push_back(fmt::format("likely cause: {} does not say which algorithm NCCL ran (no NCCL_ALGO in it) and "
                                     "podnet's tuner timed {}; if the run fixed one, give it: --set "
                                     "collective.algorithms=ring (NCCL_ALGO=RING) etc.",
                                     l.source, fmt::join(timed_text, ", ")));
    }
    if (l.ranks_per_host != gpus_per_server)
      c.doubts.push_back(fmt::format("likely cause: {} ran {} per host, the scenario's servers have {}: its "
                                     "NICs and NVLink are shared as on the scenario's servers, not as on the log's "
                                     "(--set server.gpus={} if its servers had {})",
                                     l.source, plural(l.ranks_per_host, "GPU", "GPUs"), gpus_per_server,
                                     l.ranks_per_host, l.ranks_per_host));
  }
  if (!bound_keys.empty())
    c.doubts.push_back(fmt::format("likely cause: {} ({}): {}",
                                   bound_keys.size() == 1 ? "a key at its bound" : "keys at their bounds",
                                   fmt::join(bound_keys, ", "),
                                   std::any_of(c.keys.begin(), c.keys.end(), at_upper_limit)
                                       ? "check the scenario against the logs' servers (a key at its largest value "
                                         "cannot go further), widen the other bounds (--fit KEY=LO:HI) or fit "
                                         "other keys"
                                       : "widen the bounds (--fit KEY=LO:HI) or fit other keys"));
}
}  // namespace

double to_u(const FittedKey& k, double v) { return log_space(k) ? std::log(v) : v; }

double from_u(const FittedKey& k, double u) { return log_space(k) ? std::exp(u) : u; }

std::vector<std::string> default_fit_keys(const std::vector<NcclTestsLog>& logs, const scenario::Scenario& sc,
                                          const std::string& op) {
  bool multi_host = false, engine_latency = false;
  for (const auto& l : logs) {
    multi_host = multi_host || l.hosts().size() > 1;
    // all-to-all and send/recv are not NCCL-tuned: their plans keep the engines' per-hop latency.
    const std::string test = l.test.empty() ? op : l.test;
    engine_latency = engine_latency || test == "alltoall" || test == "sendrecv";
  }
  if (!collective::options_from(sc.section("collective")).tuner) {  // the plain algorithm: engine latencies count
    if (multi_host) return {"server.nic_speed", "network.stack_latency"};
    return {"server.nvlink_bandwidth", "server.nvlink_latency"};
  }
  // NCCL's model (collective.nccl_model, the default): a tuned plan's latency is NCCL's own (no scenario key
  // moves it), and the tuner chooses algorithm, protocol and channels from the nominal speeds (nic_speed,
  // nvlink_bandwidth), so fit the payload share the links achieve, which leaves NCCL's choices as they are.
  if (!multi_host) return {"links.nvlink_efficiency"};
  const engine::LinkClass nic = engine::transport_preset(sc.section("network").get_string("transport")).nic_links;
  std::vector<std::string> keys = {fmt::format("links.{}_efficiency", engine::link_class_name(nic)),
                                   "links.nvlink_efficiency"};
  if (engine_latency) keys.push_back("network.stack_latency");
  return keys;
}

Calibration calibrate(const CalibrationInput& in) {
  if (in.logs.empty()) throw InputError("calibrate: no nccl-tests log to fit (--nccl-tests LOG)");
  std::vector<std::string> base_sets = in.sets;
  if (!in.engine.empty()) base_sets.push_back("network.engine=" + in.engine);
  const scenario::Scenario sc = scenario::load(in.scenario, base_sets, in.fragments);
  const std::string engine_name = sc.section("network").get_string("engine");
  if (!engine::engine_info(engine_name).traits.many_runs)
    throw InputError(fmt::format("calibrate runs hundreds of simulations: use --engine {} (this scenario uses "
                                 "network.engine = {})",
                                 engine::engine_names_with(&engine::EngineTraits::many_runs, " or --engine "),
                                 engine_name));
  const topology::Topology topo = sc.build_topology();
  const collective::Options copt = collective::options_from(sc.section("collective"));
  const bool tuner = copt.tuner;

  Calibration c;
  c.engine = engine_name;
  const std::vector<std::string> fit = in.fit.empty() ? default_fit_keys(in.logs, sc, in.op) : in.fit;
  for (const auto& f : fit) {
    c.keys.push_back(fit_key(f, sc));
    for (size_t i = 0; i + 1 < c.keys.size(); ++i)
      if (c.keys[i].key == c.keys.back().key) throw InputError(fmt::format("--fit {}: given twice", c.keys[i].key));
  }

  std::vector<Probe> probes;
  for (const auto& l : in.logs) {
    std::string test = l.test;
    std::string op_name;
    if (test.empty()) {
      if (in.op.empty())
        throw InputError(fmt::format("{}:{}: the log does not say which test ran (no '# Collective test starting' "
                                     "line nor <test>_perf command line): give --op",
                                     l.source, l.line));
      op_name = in.op;
    } else {
      auto it = test_ops().find(test);
      if (it == test_ops().end())
        throw InputError(fmt::format("{}:{}: {}_perf has no podnet collective (podnet runs all_reduce, all_gather, "
                                     "reduce_scatter, alltoall, broadcast, reduce, sendrecv)",
                                     l.source, l.line, test));
      op_name = it->second;
    }
    Probe p;
    p.op = collective::parse_op(op_name);
    p.algo = tuner ? "auto" : collective::default_algorithm(p.op);  // as `podnet bench` (study/bench.cpp)
    LogSetup ls;
    ls.source = l.source;
    ls.op = op_name;
    ls.log_algo = l.nccl_algo;
    ls.log_proto = l.nccl_proto;
    // The log's NCCL_ALGO / NCCL_PROTO, under NCCL's model, unless the scenario or --set chose them.
    auto check = [&](const std::string& var, const std::string& value, int line, bool algos) {
      try {
        (void)(algos ? collective::parse_algorithms(value, {}, var) : collective::parse_protocols(value, {}, var));
      } catch (const InputError& e) {
        throw InputError(fmt::format("{}:{}: {}={}: podnet cannot read it ({}); give what the run used with --set "
                                     "collective.{}=...",
                                     l.source, line, var, value, e.what(), algos ? "algorithms" : "protocols"));
      }
    };
    if (tuner && !l.nccl_algo.empty() && !copt.selection.algos_given) {
      check("NCCL_ALGO", l.nccl_algo, l.nccl_algo_line, true);
      p.log_algos = l.nccl_algo;
      ls.log_algo_applied = true;
    }
    if (tuner && !l.nccl_proto.empty() && !copt.selection.protos_given) {
      check("NCCL_PROTO", l.nccl_proto, l.nccl_proto_line, false);
      p.log_protos = l.nccl_proto;
      ls.log_proto_applied = true;
    }
    ls.hosts = static_cast<int>(l.hosts().size());
    ls.ranks_per_host = l.ranks_per_host();
    if (l.nranks() == 0)
      throw InputError(fmt::format("{}: no Rank lines and no '# nThread N nGpus M' line: cannot tell how many GPUs "
                                   "ran the test",
                                   l.source));
    if (l.nranks() == 1)
      throw InputError(fmt::format("{}: one rank: a collective of one GPU crosses no link and nccl-tests reports "
                                   "no bus bandwidth for it (busbw 0); give a log of 2 or more ranks",
                                   l.source));
    if (ls.ranks_per_host == 0)
      throw InputError(fmt::format("{}: hosts run different numbers of ranks; podnet lays a log out as H servers "
                                   "x G GPUs",
                                   l.source));
    if (ls.ranks_per_host > topo.gpus_per_server)
      throw InputError(fmt::format("{}: {} ranks per host, but the scenario's servers have {} GPUs (--set "
                                   "server.gpus={}?)",
                                   l.source, ls.ranks_per_host, topo.gpus_per_server, ls.ranks_per_host));
    if (ls.hosts > topo.servers)
      throw InputError(fmt::format("{}: the log ran on {} hosts, but the scenario has {} server{}: expected a scenario "
                                   "of at least {} GPUs (--set topology.gpus={})",
                                   l.source, ls.hosts, topo.servers, topo.servers == 1 ? "" : "s",
                                   thousands(static_cast<int64_t>(ls.hosts) * topo.gpus_per_server),
                                   static_cast<int64_t>(ls.hosts) * topo.gpus_per_server));
    for (int h = 0; h < ls.hosts; ++h)
      for (int g = 0; g < ls.ranks_per_host; ++g) ls.gpus.push_back(h * topo.gpus_per_server + g);
    p.group = ls.gpus;
    for (const auto& r : l.rows) {
      const auto& res = r.result();
      for (const NcclTestsResult* b : {&r.out_of_place, &r.in_place})
        if (b->present && b->wrong > 0)
          throw InputError(fmt::format(
              "{}:{}: {} #wrong {}: nccl-tests found {} at {} B, so this run was broken (a faulty "
              "GPU, NIC, link or driver) and its times are not a fabric's to fit; rerun it, or remove the log",
              l.source, r.line, b == &r.out_of_place ? "out-of-place" : "in-place", b->wrong,
              plural(b->wrong, "wrong value", "wrong values"), r.bytes));
      if (r.bytes <= 0 || res.time_us <= 0) continue;  // nothing to compare
      p.sizes.push_back(r.bytes);
      p.log_seconds.push_back(res.time_us * 1e-6);
      p.lines.push_back(r.line);
    }
    if (p.sizes.empty()) throw InputError(fmt::format("{}: no row with a positive size and time", l.source));
    probes.push_back(std::move(p));
    c.logs.push_back(std::move(ls));
  }

  size_t rows_given = 0;
  for (const auto& p : probes) rows_given += p.sizes.size();
  if (rows_given > kMaxCalibrationRows)
    throw InputError(fmt::format("calibrate: the logs give {} rows to fit, at most {} are fitted (each of the fit's "
                                 "few hundred evaluations times every row); give fewer logs, or keep the sizes "
                                 "that matter (nccl-tests -b/-e/-f)",
                                 thousands(static_cast<int64_t>(rows_given)),
                                 thousands(static_cast<int64_t>(kMaxCalibrationRows))));
  Evaluator ev(in, c.keys, probes);
  std::vector<double> x;
  for (const auto& k : c.keys) x.push_back(k.value);
  ev.times(x);  // the start must be valid: its InputError goes to the user
  double best = ev.objective(x);
  size_t n_sizes = 0;
  for (const auto& p : probes) n_sizes += p.sizes.size();
  auto report_progress = [&](const std::string& key) {
    if (in.progress) in.progress(ev.evaluations, std::sqrt(best / static_cast<double>(n_sizes)), key);
  };
  constexpr int kSectionSteps = 24;
  constexpr int kMaxSweeps = 8;
  const double kGolden = (std::sqrt(5.0) - 1) / 2;
  // Per key, the range of the objective over every value tried: a key that never changed it has no effect.
  std::vector<double> f_lo(c.keys.size(), best), f_hi(c.keys.size(), best);
  for (c.sweeps = 1; c.sweeps <= kMaxSweeps; ++c.sweeps) {
    double moved = 0;
    for (size_t i = 0; i < c.keys.size(); ++i) {
      const FittedKey& k = c.keys[i];
      double a = to_u(k, k.lo), b = to_u(k, k.hi);
      const double width = b - a;
      auto f_at = [&](double u) {
        std::vector<double> y = x;
        y[i] = from_u(k, u);
        const double f = ev.objective(y);
        f_lo[i] = std::min(f_lo[i], f);
        f_hi[i] = std::max(f_hi[i], f);
        report_progress(k.key);
        return f;
      };
      double u1 = b - kGolden * (b - a), u2 = a + kGolden * (b - a);
      double f1 = f_at(u1), f2 = f_at(u2);
      for (int s = 0; s < kSectionSteps; ++s) {
        if (f1 <= f2) {  // ties go left: deterministic
          b = u2;
          u2 = u1;
          f2 = f1;
          u1 = b - kGolden * (b - a);
          f1 = f_at(u1);
        } else {
          a = u1;
          u1 = u2;
          f1 = f2;
          u2 = a + kGolden * (b - a);
          f2 = f_at(u2);
        }
      }
      const double u = f1 <= f2 ? u1 : u2;
      const double fu = std::min(f1, f2);
      if (fu < best) {  // keep the current value unless the search found better
        moved = std::max(moved, std::abs(u - to_u(k, x[i])) / width);
        x[i] = from_u(k, u);
        best = fu;
      }
    }
    if (moved < 1e-4) break;
  }
  c.sweeps = std::min(c.sweeps, kMaxSweeps);

  std::vector<double> x0;
  for (const auto& k : c.keys) x0.push_back(k.start);
  const auto t0 = ev.times(x0);
  const auto t1 = ev.times(x);  // last: ev.chosen holds what the fitted values time
  for (size_t i = 0; i < c.keys.size(); ++i) {
    c.keys[i].value = x[i];
    c.keys[i].text = text_of(c.keys[i].type, x[i]);
  }
  double s0 = 0, s1 = 0;
  for (size_t i = 0; i < probes.size(); ++i) {
    const double factor = collective::bus_factor(probes[i].op, static_cast<int64_t>(probes[i].group.size()));
    for (size_t k = 0; k < probes[i].sizes.size(); ++k) {
      SizeResidual r;
      r.log = i;
      r.line = probes[i].lines[k];
      r.bytes = probes[i].sizes[k];
      r.log_time_us = probes[i].log_seconds[k] * 1e6;
      r.log_busbw = static_cast<double>(r.bytes) / probes[i].log_seconds[k] / 1e9 * factor;
      r.start_time_us = t0[i][k] * 1e6;
      r.fit_time_us = t1[i][k] * 1e6;
      r.fit_busbw = static_cast<double>(r.bytes) / t1[i][k] / 1e9 * factor;
      r.ratio = r.fit_busbw / r.log_busbw;
      r.algorithm = ev.chosen[i][k].first;
      r.protocol = ev.chosen[i][k].second;
      const double e0 = probes[i].log_seconds[k] / t0[i][k] - 1;
      s0 += e0 * e0;
      s1 += (r.ratio - 1) * (r.ratio - 1);
      c.max_abs_fit = std::max(c.max_abs_fit, std::abs(r.ratio - 1));
      c.rows.push_back(r);
    }
  }
  c.rms_start = std::sqrt(s0 / static_cast<double>(c.rows.size()));
  c.rms_fit = std::sqrt(s1 / static_cast<double>(c.rows.size()));
  for (size_t i = 0; i < c.keys.size(); ++i) {
    const FittedKey& k = c.keys[i];
    bool low = false;
    if (!(f_hi[i] > f_lo[i])) {
      c.notes.push_back(fmt::format("{} changed no time of these logs (every value from {} to {} gave the same "
                                    "fit): it is not fitted, its value is the start's, {}",
                                    k.key, k.lo_text, k.hi_text, k.text));
    } else if (c.rms_fit >= kExactFitRms && at_upper_limit(k)) {
      // At the largest value the key takes (an efficiency of 1): no range goes further.
      c.notes.push_back(fmt::format("{} fitted at {}, the largest value it takes: the logs are faster than the "
                                    "scenario's links allow; check the scenario against the logs' servers "
                                    "(server.nics, server.nic_speed, server.nvlink_bandwidth)",
                                    k.key, k.hi_text));
    } else if (c.rms_fit >= kExactFitRms && at_bound(k, &low)) {
      const bool nic = k.key == "links.ethernet_efficiency" || k.key == "links.infiniband_efficiency";
      // --fit replaces the keys fitted by default: the way to widen one names the others too.
      std::string widen;
      for (const auto& o : c.keys) widen += fmt::format(" --fit {}{}", o.key, o.key == k.key ? "=LO:HI" : "");
      c.notes.push_back(fmt::format("{} fitted at its {} bound, {}: the logs want a value beyond it; widen it "
                                    "({}) or check the scenario and the logs{}",
                                    k.key, low ? "lower" : "upper", low ? k.lo_text : k.hi_text, widen.substr(1),
                                    nic && low ? " (the log's servers may have fewer or slower NICs than the "
                                                 "scenario's: server.nics, server.nic_speed)"
                                               : ""));
    }
  }
  // A log cut short (no "# Avg bus bandwidth" line after its table) fits only the sizes it kept.
  for (const auto& l : in.logs)
    if (l.avg_busbw_gbyte_per_s < 0)
      c.notes.push_back(fmt::format("{} has no '# Avg bus bandwidth' line after its table: the run may have been cut "
                                    "short ({} size{} kept); a fit to a few small sizes says little about large ones",
                                    l.source, l.rows.size(), l.rows.size() == 1 ? "" : "s"));
  if (c.keys.size() > c.rows.size())
    c.notes.push_back(fmt::format("{} keys fitted to {}: more unknowns than measurements, the fit is not "
                                  "unique; give logs with more sizes or fit fewer keys",
                                  c.keys.size(), plural(static_cast<int64_t>(c.rows.size()), "size", "sizes")));
  // Under NCCL's model a sendrecv across servers is bound by NCCL's p2p channels (a rate per channel,
  // collective/pairwise.hpp), not by the NIC: a NIC efficiency fitted to it below that rate makes every other
  // collective across servers slower too.
  bool net_sendrecv = false;
  for (const auto& l : in.logs)
    net_sendrecv = net_sendrecv || ((l.test.empty() ? in.op : l.test) == "sendrecv" && l.hosts().size() > 1);
  bool nic_key = false;
  for (const auto& k : c.keys)
    nic_key = nic_key || k.key == "links.ethernet_efficiency" || k.key == "links.infiniband_efficiency";
  if (tuner && net_sendrecv && nic_key)
    c.notes.push_back(
        "a sendrecv log across servers is fitted with the NIC's efficiency, but NCCL's p2p channels, not the NIC, "
        "bound it under NCCL's model (a fitted rate per channel: docs/contributing/validation/one-server.md, "
        "\"sendrecv across servers\"): "
        "a NIC efficiency fitted below that rate would slow every collective across servers; fit the NIC on "
        "all-reduce, all-gather or all-to-all logs");
  c.evaluations = ev.evaluations;
  c.refused = ev.refused;
  std::vector<bool> moved(c.keys.size());
  for (size_t i = 0; i < c.keys.size(); ++i) moved[i] = f_hi[i] > f_lo[i];
  judge(c, topo.gpus_per_server, moved);
  return c;
}

std::string fragment_yaml(const Calibration& c, const CalibrationInput& in) {
  std::ostringstream out;
  out << "# podnet calibrate: fitted on scenario " << in.scenario << " (" << c.engine << " engine) to\n";
  for (const auto& l : c.logs) {
    out << fmt::format("#   {}: {} on {} x {}\n", l.source, l.op, plural(l.hosts, "host", "hosts"),
                       plural(l.ranks_per_host, "GPU", "GPUs"));
    // The fit holds for the algorithm the log ran; a run under the tuner may pick another (NVLS on 8 GPUs).
    if (!l.log_algo.empty() && l.log_algo_applied)
      out << fmt::format("#   timed as the log ran it, NCCL_ALGO={}: to compare with the log, run with --set "
                         "collective.algorithms={} (the fragment leaves the algorithms to the tuner)\n",
                         l.log_algo, fmt::join(algorithms_of(l.log_algo), ","));
  }
  out << fmt::format("# residual of busbw over {} sizes: rms {:.2f}% (from {:.2f}% at the start), max {:.2f}%\n",
                     c.rows.size(), 100 * c.rms_fit, 100 * c.rms_start, 100 * c.max_abs_fit);
  for (const auto& n : c.notes) out << "# note: " << n << "\n";
  for (const auto& n : c.doubts) out << "# NOT TRUSTED (written with --force): " << n << "\n";
  out << "# apply with: podnet bench|train SCENARIO --config-add THIS_FILE\n";
  std::map<std::string, std::vector<const FittedKey*>> by_section;
  for (const auto& k : c.keys) by_section[k.key.substr(0, k.key.find('.'))].push_back(&k);
  for (const auto& [section, keys] : by_section) {
    out << section << ":\n";
    for (const auto* k : keys)
      out << fmt::format("  {}: {}    # was {}\n", k->key.substr(k->key.find('.') + 1), k->text, k->start_text);
  }
  return out.str();
}

}  // namespace podnet::study
