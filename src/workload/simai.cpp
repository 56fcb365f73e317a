#include "workload/simai.hpp"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fstream>
#include <map>
#include <numeric>
#include <sstream>

#include "core/error.hpp"
#include "core/params.hpp"
#include "workload/job.hpp"

namespace podnet::workload::simai {

namespace {

std::vector<std::string> split_ws(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream ss(line);
  for (std::string tok; ss >> tok;) out.push_back(tok);
  return out;
}

bool parse_comm(const std::string& text, Comm& c) {
  c = Comm{};
  std::string t = text;
  if (t == "NONE") return true;
  if (t.size() > 6 && t.compare(t.size() - 6, 6, "_DP_EP") == 0) {
    c.scope = Scope::DpEp;
    t.resize(t.size() - 6);
  } else if (t.size() > 3 && t.compare(t.size() - 3, 3, "_EP") == 0) {
    c.scope = Scope::Ep;
    t.resize(t.size() - 3);
  }
  using collective::Op;
  if (t == "ALLREDUCE") c.op = Op::AllReduce;
  else if (t == "ALLGATHER") c.op = Op::AllGather;
  else if (t == "REDUCESCATTER") c.op = Op::ReduceScatter;
  else if (t == "ALLTOALL") c.op = Op::AllToAll;
  else if (t == "BROADCAST") c.op = Op::Broadcast;
  else return false;
  c.none = false;
  return true;
}

// The first entry of `ids` that reads as `id` (for the message about a repeated id).
size_t first_at(const std::vector<std::string>& ids, int64_t id) {
  for (size_t k = 0; k < ids.size(); ++k) {
    int64_t v = 0;
    if (parse_int(ids[k], v) && v == id) return k;
  }
  return 0;
}

constexpr int64_t kMaxRows = 10'000'000;                // layer rows in a workload file
constexpr int64_t kMaxNodes = 16 * topology::kMaxGpus;  // nodes (GPUs + switches) and links in a .topo

bool getline_counted(std::istream& in, std::string& line, int& number) {
  if (!std::getline(in, line)) return false;
  ++number;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return true;
}

}  // namespace

Workload parse_workload(std::istream& in, const std::string& source) {
  Workload w;
  w.source = source;
  int ln = 0;
  std::string line;
  auto fail = [&](int at, const std::string& msg) -> InputError {
    return InputError(fmt::format("{}:{}: {}", source, at, msg));
  };
  while (getline_counted(in, line, ln) && split_ws(line).empty()) {
  }
  const auto head = split_ws(line);
  if (head.empty())
    throw fail(ln, "empty file; expected a SimAI workload header (HYBRID_TRANSFORMER_FWD_IN_BCKWD ...)");
  w.policy = head[0];
  if (w.policy.rfind("HYBRID_TRANSFORMER", 0) != 0)
    throw fail(ln,
               fmt::format("parallelism '{}' is not supported; expected HYBRID_TRANSFORMER_FWD_IN_BCKWD", w.policy));
  std::map<std::string, int64_t> kv;
  for (size_t i = 1; i < head.size(); ++i) {
    std::string key = head[i];
    if (!key.empty() && key.back() == ':') key.pop_back();
    int64_t v = 0;
    if (i + 1 < head.size() && parse_int(head[i + 1], v)) {
      kv[key] = v;
      ++i;
    } else {
      throw fail(ln, fmt::format("header key '{}' has no integer value", key));
    }
  }
  if (!kv.count("model_parallel_NPU_group")) throw fail(ln, "header: missing model_parallel_NPU_group (the TP size)");
  auto get = [&](const char* k, int64_t def) { return kv.count(k) ? kv[k] : def; };
  w.tp = get("model_parallel_NPU_group", 1);
  w.new_header = kv.count("ep") != 0;
  w.ep = get("ep", 1);
  w.pp = get("pp", 1);
  w.vpp = get("vpp", 1);
  w.ga = get("ga", 1);
  w.all_gpus = get("all_gpus", 0);
  w.pp_comm = get("pp_comm", 0);
  for (const char* k : {"model_parallel_NPU_group", "ep", "pp", "vpp", "ga"})
    if (get(k, 1) < 1) throw fail(ln, fmt::format("header: {}: {} must be >= 1", k, get(k, 1)));
  // Limits (simai.hpp): each factor alone; their products are checked by job_of.
  const int64_t max_gpus = topology::kMaxGpus;
  for (const auto& [k, lim] : {std::pair<const char*, int64_t>{"model_parallel_NPU_group", max_gpus},
                               {"ep", max_gpus},
                               {"pp", max_gpus},
                               {"all_gpus", max_gpus},
                               {"vpp", 1024},
                               {"ga", kMaxPipelinePasses}})
    if (get(k, 0) > lim)
      throw fail(ln, fmt::format("header: {}: {} exceeds podnet's limit of {}{}", k, get(k, 0), lim,
                                 std::string_view(k) == "ga"    ? " microbatches (GA x VPP x PP pipeline passes)"
                                 : std::string_view(k) == "vpp" ? " model chunks per GPU"
                                                                : " GPUs"));
  if (w.all_gpus < 0) throw fail(ln, fmt::format("header: all_gpus: {} must be >= 0", w.all_gpus));
  if (w.pp_comm < 0 || w.pp_comm > kMaxBytes)
    throw fail(ln, fmt::format("header: pp_comm: {} bytes; expected 0 to {} (1 PiB)", w.pp_comm, kMaxBytes));
  const int header_line = ln;
  w.header_line = ln;
  if (!getline_counted(in, line, ln)) throw fail(header_line + 1, "missing the number of layer rows");
  int64_t count = 0;
  {
    const auto t = split_ws(line);
    if (t.size() != 1 || !parse_int(t[0], count) || count < 0 || count > kMaxRows)
      throw fail(ln, fmt::format("expected the number of layer rows (0 to {}), got '{}'", kMaxRows, line));
  }
  // Sums over the rows stay inside the picosecond clock: each compute time and their per-pass totals
  // at most kMaxTime (1000 h); byte counts at most kMaxBytes.
  const int64_t max_ns = kMaxTime.ps / 1000;
  int64_t sum_fwd = 0, sum_bwd = 0;
  while (getline_counted(in, line, ln)) {
    const auto f = split_ws(line);
    if (f.empty()) continue;
    if (static_cast<int64_t>(w.rows.size()) == count)
      throw fail(ln, fmt::format("more layer rows than the {} line 2 announces", count));
    if (f.size() != 11 && f.size() != 12)
      throw fail(ln, fmt::format("expected 12 fields (name dep fwd_ns fwd_comm fwd_bytes ig_ns ig_comm ig_bytes "
                                 "wg_ns wg_comm wg_bytes wg_update), got {}",
                                 f.size()));
    Row r;
    r.line = ln;
    r.name = f[0];
    auto num = [&](size_t i, const char* what, int64_t& out) {
      if (!parse_int(f[i], out) || (out < 0 && i != 1))
        throw fail(ln, fmt::format("field {} ({}): '{}' is not a non-negative integer", i + 1, what, f[i]));
      const bool ns = std::string_view(what).ends_with("_ns"), bytes = std::string_view(what).ends_with("_bytes");
      if ((ns && out > max_ns) || (bytes && out > kMaxBytes))
        throw fail(ln, fmt::format("field {} ({}): {} exceeds podnet's limit of {}", i + 1, what, out,
                                   ns ? fmt::format("{} ns (1000 h)", max_ns)
                                      : fmt::format("{} bytes (1 PiB)", kMaxBytes)));
    };
    auto comm = [&](size_t i, const char* what, Comm& out) {
      if (!parse_comm(f[i], out))
        throw fail(ln, fmt::format("field {} ({}): unknown comm type '{}'; expected NONE, ALLREDUCE, ALLGATHER, "
                                   "REDUCESCATTER, ALLTOALL or BROADCAST, optionally with _EP or _DP_EP",
                                   i + 1, what, f[i]));
    };
    num(1, "dep", r.dep);
    num(2, "fwd_compute_ns", r.fwd_ns);
    comm(3, "fwd_comm_type", r.fwd);
    num(4, "fwd_bytes", r.fwd_bytes);
    num(5, "ig_compute_ns", r.ig_ns);
    comm(6, "ig_comm_type", r.ig);
    num(7, "ig_bytes", r.ig_bytes);
    num(8, "wg_compute_ns", r.wg_ns);
    comm(9, "wg_comm_type", r.wg);
    num(10, "wg_bytes", r.wg_bytes);
    if (f.size() == 12) num(11, "wg_update", r.wg_update);
    sum_fwd += r.fwd_ns;  // each <= max_ns, so a sum of two cannot wrap before the check
    sum_bwd += r.ig_ns + r.wg_ns;
    if (sum_fwd > max_ns || sum_bwd > max_ns)
      throw fail(ln, fmt::format("the rows' {} compute up to here adds up to more than {} ns (1000 h), podnet's "
                                 "longest simulated time",
                                 sum_fwd > max_ns ? "forward" : "backward (ig + wg)", max_ns));
    w.rows.push_back(std::move(r));
  }
  if (static_cast<int64_t>(w.rows.size()) != count)
    throw fail(ln, fmt::format("line 2 announces {} layer rows, the file has {}", count, w.rows.size()));
  return w;
}

Workload load_workload(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw InputError(fmt::format("{}: cannot read the file", path));
  return parse_workload(f, path);
}

Job job_of(const Workload& w, int64_t gpus, int64_t fabric_gpus) {
  const int64_t n = w.all_gpus > 0 ? w.all_gpus : gpus;
  const std::string at = fmt::format("{}:{}: header: ", w.source, w.header_line);
  const char* gpus_key = w.all_gpus > 0 ? "all_gpus" : "model_parallel_NPU_group";
  // TP x PP in floating point first: the header's factors may be as large as 2^20 each (or wrap int64 unchecked).
  if (static_cast<double>(w.tp) * static_cast<double>(w.pp) > static_cast<double>(n) || n <= 0 ||
      n % (w.tp * w.pp) != 0)
    throw InputError(
        fmt::format("{}{}: {} GPUs are not a multiple of TP x PP = model_parallel_NPU_group x pp = {} x {}", at,
                    gpus_key, n, w.tp, w.pp));
  const int64_t mp = w.tp * w.pp;
  if (n > fabric_gpus)
    throw InputError(fmt::format("{}{}: the workload needs {} GPUs, the fabric has {}", at, gpus_key, n, fabric_gpus));
  Job j;
  j.model = ModelSpec{};
  j.model.name = "simai:" + w.source.substr(w.source.find_last_of('/') + 1);
  j.model.layers = 0;
  j.model.hidden = 0;
  j.model.heads = 1;
  j.model.kv_heads = 1;
  j.model.experts = std::max<int64_t>(1, w.ep);  // so that EP/EDP groups exist when ep > 1
  j.gpu = GpuSpec{};
  j.gpu.name = "imported";
  j.tp = w.tp;
  j.pp = w.pp;
  j.dp = n / mp;
  j.ep = w.ep;
  if (j.dp % j.ep != 0)
    throw InputError(fmt::format("{}ep: {} does not divide the data-parallel size {}", at, w.ep, j.dp));
  // Megatron's interleaved schedule needs the microbatches to divide into groups of PP.
  j.interleave = w.pp > 1 && w.ga % w.pp == 0 ? w.vpp : 1;
  if (static_cast<double>(w.ga) * static_cast<double>(j.interleave) * static_cast<double>(w.pp) >
      static_cast<double>(kMaxPipelinePasses))
    throw InputError(fmt::format("{}ga: GA x VPP x PP = {} x {} x {} pipeline passes exceed podnet's limit of {}: "
                                 "shrink ga",
                                 at, w.ga, j.interleave, w.pp, kMaxPipelinePasses));
  j.microbatch = 1;
  j.global_batch = w.ga * j.dp;
  j.tokens = 0;
  j.recompute = false;
  return j;
}

Imported import_iteration(const Workload& w, const Job& job, const std::vector<int32_t>& gpu_of_rank,
                          const topology::Topology& topo, engine::NetworkBackend& backend,
                          const TrainOptions& options) {
  Imported im;
  im.job = job;
  auto group = [&](const std::vector<int64_t>& ranks) {
    collective::Group g;
    for (int64_t r : ranks) g.push_back(gpu_of_rank[static_cast<size_t>(r)]);
    return g;
  };
  const collective::Group tp = group(tp_group(job, 0, 0));
  const collective::Group ep = group(ep_group(job, 0, 0, 0));
  const collective::Group edp = group(edp_group(job, 0, 0, 0));
  std::map<std::tuple<int, int, Bytes>, Time> cache;
  // Blocking collectives: timed once per (op, group, bytes).
  auto timed = [&](const Comm& c, Bytes bytes, const collective::Group& g, int which) {
    if (c.none || g.size() < 2 || bytes <= 0) return Time();
    auto key = std::make_tuple(static_cast<int>(c.op), which, bytes);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
    const auto plan =
        collective::make_plan(collective::default_algorithm(c.op), c.op, g, bytes, options.collective, topo);
    const Time t = plan.transfers.empty() ? Time() : backend.run(plan).makespan;
    cache.emplace(key, t);
    return t;
  };
  GroupTraffic tr_tp{"tp"}, tr_ep{"ep"}, tr_dp{"dp"}, tr_edp{"edp"};
  // Per-iteration totals of one stage (the rows already hold every microbatch of the iteration).
  Time fwd_tp, fwd_ep, bwd_tp, bwd_ep;
  auto blocking = [&](const Comm& c, Bytes bytes, Time& tp_time, Time& ep_time) {
    if (c.none || bytes <= 0) return Time();  // AICB writes some ig collectives with 0 bytes: nothing moves
    GroupTraffic* tr = c.scope == Scope::Default ? &tr_tp : c.scope == Scope::Ep ? &tr_ep : &tr_edp;
    const collective::Group& g = c.scope == Scope::Default ? tp : c.scope == Scope::Ep ? ep : edp;
    const Time t = timed(c, bytes, g, static_cast<int>(c.scope));
    tr->collectives += 1;
    tr->bytes += static_cast<double>(bytes);
    tr->blocking += t;
    (c.scope == Scope::Default ? tp_time : ep_time) += t;
    return t;
  };
  int64_t fwd_ns = 0, bwd_ns = 0;
  for (const Row& r : w.rows) {
    fwd_ns += r.fwd_ns;
    blocking(r.fwd, r.fwd_bytes, fwd_tp, fwd_ep);
  }
  // Backward, bottom to top; wg collectives on DP/EDP groups become buckets at their position.
  struct Pending {
    GradBucket bucket;
    Time at;  // time into the iteration's backward work when its gradients are ready
  };
  std::vector<Pending> pending;
  Time t_bwd;
  for (auto it = w.rows.rbegin(); it != w.rows.rend(); ++it) {
    const Row& r = *it;
    bwd_ns += r.ig_ns + r.wg_ns;
    t_bwd += Time((r.ig_ns + r.wg_ns) * 1000) + blocking(r.ig, r.ig_bytes, bwd_tp, bwd_ep);
    if (r.wg.none || r.wg_bytes <= 0) continue;
    if (r.wg.scope == Scope::Ep) {  // an expert-parallel wg collective blocks like an ig one
      t_bwd += blocking(r.wg, r.wg_bytes, bwd_tp, bwd_ep);
      continue;
    }
    const bool expert = r.wg.scope == Scope::DpEp;
    GroupTraffic& tr = expert ? tr_edp : tr_dp;
    tr.collectives += 1;
    tr.bytes += static_cast<double>(r.wg_bytes);
    pending.push_back({{r.wg.op, expert, r.wg_bytes, 1.0, fmt::format("{}@{}", r.name, r.line)}, t_bwd});
  }
  // One pass = one model chunk on one microbatch: the iteration's totals over GA x v passes.
  const int64_t passes = std::max<int64_t>(1, job.microbatches() * job.interleave);
  auto per_pass = [&](Time total) { return Time(total.ps / passes); };
  OpTimes o;
  o.fwd_compute = per_pass(Time(fwd_ns * 1000));
  o.bwd_compute = per_pass(Time(bwd_ns * 1000));
  o.fwd_tp = per_pass(fwd_tp);
  o.fwd_ep = per_pass(fwd_ep);
  o.bwd_tp = per_pass(bwd_tp);
  o.bwd_ep = per_pass(bwd_ep);
  IterationTimes& t = im.times;
  t.ops.assign(static_cast<size_t>(job.pp), std::vector<OpTimes>(static_cast<size_t>(job.interleave), o));
  t.optimizer.assign(static_cast<size_t>(job.pp), Time());
  t.pp_p2p_bytes = job.pp > 1 ? w.pp_comm * job.tp : 0;  // pp_comm on each of the TP rank pairs
  t.buckets.assign(static_cast<size_t>(job.pp),
                   std::vector<std::vector<GradBucket>>(static_cast<size_t>(job.interleave)));
  // Gradients are reduced once per iteration, after the last microbatch's backward: a bucket whose row
  // comes `left` before the end of the iteration's backward work is ready that long before the end of
  // the last backward pass (of chunk 0, the last one the schedule runs), at the start of it if earlier.
  const Time total_bwd = Time(bwd_ns * 1000) + bwd_tp + bwd_ep;
  const Time last_pass = o.bwd_compute + o.bwd_tp + o.bwd_ep;
  const bool dp_groups = job.dp > 1, edp_groups = job.dp / job.ep > 1;
  for (auto& p : pending) {
    if (p.bucket.expert ? !edp_groups : !dp_groups) continue;
    const double left = static_cast<double>((total_bwd - p.at).ps);
    p.bucket.ready = last_pass.ps > 0 ? std::clamp(1.0 - left / static_cast<double>(last_pass.ps), 1e-9, 1.0) : 1.0;
    for (auto& stage : t.buckets) stage[0].push_back(p.bucket);
  }
  for (GroupTraffic* g : {&tr_tp, &tr_ep, &tr_dp, &tr_edp})
    if (g->collectives > 0) im.traffic.push_back(*g);
  im.passes = passes;
  return im;
}

topology::Topology parse_topology(std::istream& in, const std::string& source) {
  using topology::Media;
  using topology::Node;
  using topology::NodeKind;
  auto fail = [&](int at, const std::string& msg) -> InputError {
    return InputError(fmt::format("{}:{}: {}", source, at, msg));
  };
  int ln = 0;
  std::string line;
  while (getline_counted(in, line, ln) && split_ws(line).empty()) {
  }
  const auto head = split_ws(line);
  int64_t nodes = 0, gps = 0, nvs = 0, sws = 0, links = 0;
  if (head.size() < 5 || !parse_int(head[0], nodes) || !parse_int(head[1], gps) || !parse_int(head[2], nvs) ||
      !parse_int(head[3], sws) || !parse_int(head[4], links))
    throw fail(ln, "expected '<nodes> <gpus_per_server> <nvswitches> <switches> <links> <gpu_type>'");
  if (nodes > kMaxNodes || links < 0 || links > kMaxNodes)
    throw fail(ln, fmt::format("{} nodes and {} links; podnet reads up to {} of each (fabrics of up to {} GPUs and "
                               "their switches)",
                               nodes, links, kMaxNodes, topology::kMaxGpus));
  const int64_t gpus = nodes - nvs - sws;
  if (gps < 1 || nvs < 0 || sws < 0 || gpus < 1 || gpus % gps != 0)
    throw fail(ln, fmt::format("{} nodes - {} NVSwitches - {} switches = {} GPUs, not a positive multiple of {} GPUs "
                               "per server",
                               nodes, nvs, sws, gpus, gps));
  if (gpus > topology::kMaxGpus)
    throw fail(ln, fmt::format("{} GPUs; podnet builds fabrics of up to {} GPUs", gpus, topology::kMaxGpus));
  const std::string gpu_type = head.size() > 5 ? head[5] : "gpu";
  if (!getline_counted(in, line, ln)) throw fail(ln + 1, "missing the line of switch ids");
  const auto ids = split_ws(line);
  if (static_cast<int64_t>(ids.size()) != nvs + sws)
    throw fail(ln, fmt::format("expected {} switch ids (NVSwitches first), got {}", nvs + sws, ids.size()));
  std::vector<int> kind(static_cast<size_t>(nodes), 0);  // 0 GPU, 1 NVSwitch, 2 switch
  for (size_t k = 0; k < ids.size(); ++k) {
    int64_t id = 0;
    if (!parse_int(ids[k], id) || id < gpus || id >= nodes)
      throw fail(ln, fmt::format("switch id '{}' is not in [{}, {})", ids[k], gpus, nodes));
    if (kind[static_cast<size_t>(id)] != 0)
      throw fail(ln, fmt::format("switch id {} is given twice (entries {} and {}); expected each switch once", id,
                                 first_at(ids, id) + 1, k + 1));
    kind[static_cast<size_t>(id)] = static_cast<int64_t>(k) < nvs ? 1 : 2;
  }
  struct L {
    int64_t a, b;
    Bandwidth bw;
    Time lat;
    int line;
  };
  std::vector<L> ls;
  while (getline_counted(in, line, ln)) {
    const auto f = split_ws(line);
    if (f.empty()) continue;
    L l{};
    std::string expected;
    if (f.size() < 4 || !parse_int(f[0], l.a) || !parse_int(f[1], l.b))
      throw fail(ln, "expected 'src dst <bandwidth> <latency> <error_rate>'");
    if (l.a < 0 || l.a >= nodes || l.b < 0 || l.b >= nodes || l.a == l.b)
      throw fail(ln, fmt::format("link {} - {}: node ids must be distinct and in [0, {})", l.a, l.b, nodes));
    if (!parse_bandwidth(f[2], l.bw, expected))
      throw fail(ln, fmt::format("bandwidth '{}': expected {}", f[2], expected));
    if (!parse_time(f[3], l.lat, expected)) throw fail(ln, fmt::format("latency '{}': expected {}", f[3], expected));
    if (kind[static_cast<size_t>(l.a)] == 0 && kind[static_cast<size_t>(l.b)] == 0)
      throw fail(ln, fmt::format("link {} - {} joins two GPUs; expected a GPU to an NVSwitch or a switch", l.a, l.b));
    l.line = ln;
    ls.push_back(l);
  }
  if (static_cast<int64_t>(ls.size()) != links)
    throw fail(ln, fmt::format("the header announces {} links, the file has {}", links, ls.size()));

  // Switch tiers: distance from the GPUs.
  std::vector<int> tier(static_cast<size_t>(nodes), 0);
  std::vector<std::vector<int64_t>> adj(static_cast<size_t>(nodes));
  for (const auto& l : ls) {
    adj[static_cast<size_t>(l.a)].push_back(l.b);
    adj[static_cast<size_t>(l.b)].push_back(l.a);
  }
  std::vector<int64_t> frontier;
  for (int64_t n = 0; n < nodes; ++n)
    if (kind[static_cast<size_t>(n)] == 2)
      for (int64_t m : adj[static_cast<size_t>(n)])
        if (kind[static_cast<size_t>(m)] == 0 && tier[static_cast<size_t>(n)] == 0) {
          tier[static_cast<size_t>(n)] = 1;
          frontier.push_back(n);
        }
  int max_tier = frontier.empty() ? 0 : 1;
  while (!frontier.empty()) {
    std::vector<int64_t> next;
    for (int64_t n : frontier)
      for (int64_t m : adj[static_cast<size_t>(n)])
        if (kind[static_cast<size_t>(m)] == 2 && tier[static_cast<size_t>(m)] == 0) {
          tier[static_cast<size_t>(m)] = tier[static_cast<size_t>(n)] + 1;
          max_tier = std::max(max_tier, tier[static_cast<size_t>(m)]);
          next.push_back(m);
        }
    frontier.swap(next);
  }
  for (int64_t n = 0; n < nodes; ++n)
    if (kind[static_cast<size_t>(n)] == 2 && tier[static_cast<size_t>(n)] == 0)
      throw fail(2, fmt::format("switch {} is not connected to any GPU, directly or through other switches", n));

  topology::Topology t;
  t.family = "simai";
  t.gpus_per_server = static_cast<int32_t>(gps);
  t.servers = static_cast<int32_t>(gpus / gps);
  t.racks = t.servers;
  t.groups = 1;
  t.pods = 1;
  t.rails = static_cast<int32_t>(gps);
  t.switch_latency = Time();
  t.tier_names = {""};
  const char* names[] = {"leaf", "spine", "super_spine"};
  for (int k = 1; k <= max_tier; ++k) t.tier_names.push_back(k <= 3 ? names[k - 1] : fmt::format("tier{}", k));
  std::vector<topology::NodeId> id(static_cast<size_t>(nodes), topology::kNone);
  for (int64_t g = 0; g < gpus; ++g) {
    Node n;
    n.kind = NodeKind::Gpu;
    n.server = static_cast<int32_t>(g / gps);
    n.local = static_cast<int32_t>(g % gps);
    n.rack = n.server;
    n.rail = n.local;
    n.group = 0;
    n.pod = 0;
    n.name = fmt::format("{}/{}{}", topology::server_name(n.server, t.servers), gpu_type, n.local);
    id[static_cast<size_t>(g)] = t.add_node(n);
    t.gpus.push_back(id[static_cast<size_t>(g)]);
  }
  int32_t tier_index[8] = {0};
  for (int64_t k = 0; k < static_cast<int64_t>(ids.size()); ++k) {
    int64_t sid = 0;
    parse_int(ids[static_cast<size_t>(k)], sid);
    Node n;
    if (kind[static_cast<size_t>(sid)] == 1) {
      n.kind = NodeKind::NvSwitch;
      n.server = topology::kNone;
      for (int64_t m : adj[static_cast<size_t>(sid)])
        if (kind[static_cast<size_t>(m)] == 0) {
          n.server = static_cast<int32_t>(m / gps);
          break;
        }
      n.name = fmt::format("nvswitch-{}", sid);
    } else {
      n.kind = NodeKind::Switch;
      n.tier = static_cast<uint8_t>(tier[static_cast<size_t>(sid)]);
      n.local = tier_index[std::min(n.tier, uint8_t{7})]++;
      // A leaf all of whose GPUs share one local index serves that rail.
      int32_t rail = topology::kNone;
      bool one = true;
      for (int64_t m : adj[static_cast<size_t>(sid)])
        if (kind[static_cast<size_t>(m)] == 0) {
          const auto r = static_cast<int32_t>(m % gps);
          if (rail == topology::kNone) rail = r;
          else if (rail != r) one = false;
        }
      n.rail = one ? rail : topology::kNone;
      n.group = 0;
      n.pod = 0;
      n.name = fmt::format("{}-{}", t.tier_names[n.tier], sid);
    }
    id[static_cast<size_t>(sid)] = t.add_node(n);
  }
  const uint8_t c_nvlink = t.link_class("nvlink"), c_pcie = t.link_class("pcie");
  t.gpu_nic.assign(static_cast<size_t>(gpus), topology::kNone);
  for (const auto& l : ls) {
    int64_t a = l.a, b = l.b;
    if (kind[static_cast<size_t>(b)] == 0) std::swap(a, b);  // a GPU first
    const int ka = kind[static_cast<size_t>(a)], kb = kind[static_cast<size_t>(b)];
    if (ka == 0 && kb == 1) {
      t.connect(id[static_cast<size_t>(a)], id[static_cast<size_t>(b)], l.bw, l.lat, 0, Media::NvLink, c_nvlink);
    } else if (ka == 0 && kb == 2) {
      const auto& gpu = t.nodes[static_cast<size_t>(id[static_cast<size_t>(a)])];
      Node nic;
      nic.kind = NodeKind::Nic;
      nic.server = gpu.server;
      nic.local = gpu.local;
      nic.rack = gpu.rack;
      nic.rail = gpu.local;
      nic.group = 0;
      nic.pod = 0;
      nic.name = fmt::format("{}/nic{}", topology::server_name(gpu.server, t.servers), gpu.local);
      const topology::NodeId nic_id = t.add_node(nic);
      t.connect(id[static_cast<size_t>(a)], nic_id, l.bw, Time(), 0, Media::Pcie, c_pcie);
      t.connect(nic_id, id[static_cast<size_t>(b)], l.bw, l.lat, 3, Media::Copper, t.link_class("nic-leaf"));
      if (t.gpu_nic[static_cast<size_t>(a)] == topology::kNone) t.gpu_nic[static_cast<size_t>(a)] = nic_id;
      t.nics.push_back(nic_id);
    } else if (ka == 2 && kb == 2) {
      const int lo = std::min(tier[static_cast<size_t>(a)], tier[static_cast<size_t>(b)]);
      const std::string cls = lo == 1 ? "leaf-spine" : lo == 2 ? "spine-super_spine" : fmt::format("tier{}-up", lo);
      t.connect(id[static_cast<size_t>(a)], id[static_cast<size_t>(b)], l.bw, l.lat, 30, Media::Optical,
                t.link_class(cls));
    } else {
      throw fail(l.line, fmt::format("link {} - {}: an NVSwitch may only link to GPUs", l.a, l.b));
    }
  }
  t.nics_per_server = t.nics.empty() ? 0 : static_cast<int32_t>(t.nics.size() / static_cast<size_t>(t.servers));
  // Every GPU must reach every other: a partitioned file is an input error here, not a routing failure later.
  {
    std::vector<topology::NodeId> parent(t.nodes.size());
    std::iota(parent.begin(), parent.end(), 0);
    const auto find = [&](topology::NodeId x) {
      while (parent[static_cast<size_t>(x)] != x)
        x = parent[static_cast<size_t>(x)] = parent[static_cast<size_t>(parent[static_cast<size_t>(x)])];
      return x;
    };
    for (const auto& l : t.links) parent[static_cast<size_t>(find(l.a))] = find(l.b);
    std::map<topology::NodeId, std::vector<int64_t>> parts;  // component -> its GPUs
    for (size_t g = 0; g < t.gpus.size(); ++g) parts[find(t.gpus[g])].push_back(static_cast<int64_t>(g));
    if (parts.size() > 1) {
      std::vector<std::string> shown;
      for (const auto& [root, members] : parts) {
        if (shown.size() == 3) break;
        shown.push_back(members.size() == 1
                            ? fmt::format("GPU {}", members[0])
                            : fmt::format("GPUs {}..{} ({} in all)", members.front(), members.back(), members.size()));
      }
      throw InputError(fmt::format("{}: the fabric is in {} parts that no link joins ({}{}); expected every GPU to "
                                   "reach every other (a switch-to-switch link missing?)",
                                   source, parts.size(), fmt::join(shown, "; "), parts.size() > 3 ? "; ..." : ""));
    }
  }
  t.facts.notes.push_back(fmt::format("imported from SimAI topology {}", source));
  t.finalize();
  return t;
}

topology::Topology load_topology(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw InputError(fmt::format("{}: cannot read the file", path));
  return parse_topology(f, path);
}

}  // namespace podnet::workload::simai
