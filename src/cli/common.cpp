#include "cli/common.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <unistd.h>

#include "cli/telemetry_options.hpp"
#include "core/error.hpp"
#include "core/mpi_world.hpp"
#include "engine/network_params.hpp"
#include "engine/network_presets.hpp"
#include "engine/packet/packet_options.hpp"
#include "engine/registry.hpp"
#include "routing/policies.hpp"
#include "scenario/estimate.hpp"
#include "scenario/scenario.hpp"
#include "study/bench.hpp"
#include "telemetry/export.hpp"
#include "telemetry/metrics.hpp"

namespace podnet::cli {
void add_common(CLI::App* cmd, Common& c, bool scenario_required, const std::vector<std::string>& extra_formats) {
  c.app = cmd;
  auto* opt =
      cmd->add_option("scenario", c.scenario, "scenario file (YAML) or built-in scenario name (see `podnet list`)");
  if (scenario_required) opt->required();
  cmd->add_option("--set", c.sets,
                  "override a scenario key, e.g. --set topology.oversubscription=2:1; KEY= (nothing after =) drops it, "
                  "so its default "
                  "applies (repeatable)")
      ->type_name("KEY=VALUE");
  cmd->add_option("--config-add", c.adds,
                  "merge a scenario fragment (YAML: server:, network:, ... keys) on top of the scenario before "
                  "--set, e.g. the one `podnet calibrate --out` writes (repeatable)")
      ->type_name("FILE");
  std::vector<std::string> formats = {"table", "json", "csv"};
  formats.insert(formats.end(), extra_formats.begin(), extra_formats.end());
  std::string help = "output on stdout: table (default), json or csv";
  for (const auto& f : extra_formats) help += " or " + f;
  cmd->add_option("-f,--format", c.format, help)->check(CLI::IsMember(formats));
  cmd->add_option("-o,--out", c.out_dir,
                  "also write every format (json, csv, txt) and the resolved scenario into this directory");
  cmd->add_option("--max-memory", c.max_memory,
                  "refuse, before it starts, a run whose estimated memory exceeds SIZE (e.g. 8GB; default half "
                  "the machine's physical memory)")
      ->type_name("SIZE")
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            // An empty or zero limit would read as "no limit": refused, as every other size.
            if (v.find_first_not_of(' ') == std::string::npos) return "expected a size such as 8GB, got nothing";
            // A bare number would be bytes ("10": a limit of 0 MB): the unit is asked for, as in a scenario.
            if (v.find_first_not_of("0123456789. ") == std::string::npos)
              return "'" + v + "' has no unit: expected a size such as " + v + "GB or " + v + "MB";
            try {
              if (parse_size(v, "--max-memory") <= 0) return "expected a positive size such as 8GB, got '" + v + "'";
            } catch (const InputError& e) {
              return e.what();
            }
            return {};
          },
          "", "a positive size"));  // (a named validator would read "SIZE:SIZE" in --help)
}

namespace {

// "CLASS=AMOUNT[@TIME]" -> a `failures:` entry (scenario.hpp, FailureSpec links / switches) in YAML flow syntax.
std::string share_entry(const std::string& option, const std::string& kind, const std::string& spec) {
  const auto eq = spec.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
    throw InputError(fmt::format("{} {}: expected {}=AMOUNT[@TIME], e.g. {} {}", option, spec,
                                 kind == "links" ? "CLASS" : "TIER", option,
                                 kind == "links" ? "leaf-spine=1%" : "spine=2@5ms"));
  std::string amount = spec.substr(eq + 1), at = "0s";
  if (const auto t = amount.find('@'); t != std::string::npos) {
    at = amount.substr(t + 1);
    amount = amount.substr(0, t);
  }
  const bool fraction = !amount.empty() && amount.back() == '%';
  // A bare decimal is neither a count nor (on the command line) a share: say which form each takes.
  if (!fraction && amount.find_first_of(".eE") != std::string::npos)
    throw InputError(fmt::format("{} {}: '{}' is not a whole number of {}; a share is written with % (e.g. {} {}={}%)",
                                 option, spec, amount, kind, option, spec.substr(0, eq), [&] {
                                   char* end = nullptr;
                                   const double v = std::strtod(amount.c_str(), &end);
                                   return v > 0 && v < 1 ? format_number(100 * v, 4) : std::string("1");
                                 }()));
  return fmt::format("{{{}: \"{}\", {}: \"{}\", at: \"{}\"}}", kind, spec.substr(0, eq),
                     fraction ? "fraction" : "count", amount, at);
}

}  // namespace

void add_failure_options(CLI::App* cmd, Common& c) {
  cmd->add_option_function<std::vector<std::string>>(
         "--fail-links",
         [&c](const std::vector<std::string>& v) {
           for (const auto& s : v) set_by(c, "--fail-links", "failures+", share_entry("--fail-links", "links", s));
         },
         "take a share of one class of links down, drawn from the seed: CLASS=N or CLASS=X%, optionally @TIME "
         "(default 0 s). CLASS is a link class of the fabric (leaf-spine, spine-super_spine, ...; `podnet design` "
         "lists them) or fabric (every switch-to-switch link); NIC links only when nic-leaf is named. Adds to the "
         "scenario's failures: (repeatable)")
      ->type_name("CLASS=AMOUNT");
  cmd->add_option_function<std::vector<std::string>>(
         "--fail-switches",
         [&c](const std::vector<std::string>& v) {
           for (const auto& s : v)
             set_by(c, "--fail-switches", "failures+", share_entry("--fail-switches", "switches", s));
         },
         "take a share of one tier of switches down, drawn from the seed: TIER=N or TIER=X%, optionally @TIME "
         "(e.g. spine=2, leaf=1%@5ms; repeatable)")
      ->type_name("TIER=AMOUNT");
}

void set_by(Common& c, const std::string& option, const std::string& key, const std::string& value) {
  c.sets.push_back(key + "=" + value);
  c.set_flags[key] = option;
}

void apply_limits(const Common& c) {
  scenario::estimate::set_limit(c.max_memory.empty() ? 0 : parse_size(c.max_memory, "--max-memory"));
}

scenario::Scenario load_scenario(const Common& c) {
  apply_limits(c);
  // An option and a --set that give one key different values (--engine analytical --set network.engine=flow):
  // which one was meant is the user's to say, not the order's.
  for (const auto& [key, option] : c.set_flags) {
    if (key.empty() || key.back() == '+') continue;  // failures+ and the like append; they do not conflict
    std::set<std::string> values;
    for (const std::string& s : c.sets)
      if (s.size() > key.size() && s.compare(0, key.size(), key) == 0 && s[key.size()] == '=')
        values.insert(s.substr(key.size() + 1));
    if (values.size() > 1) {
      // A value that is wrong in itself (--set network.engine=analytic) is the error to report, not the conflict.
      for (const std::string& v : values) (void)scenario::load(c.scenario, {key + "=" + v}, c.adds, {});
      throw InputError(fmt::format("{} and --set {} give {} different values ({}): give one", option, key, key,
                                   fmt::join(values, " and ")));
    }
  }
  scenario::Scenario sc = scenario::load(c.scenario, c.sets, c.adds, c.set_flags);
  // `--set KEY=` drops the key: say what it became, so that `--set topology.gpus=$GPUS` with $GPUS unset does not
  // pass for the value meant. Once per key, however often a command loads the scenario.
  static std::set<std::string> said;
  for (const std::string& key : sc.dropped) {
    if (!said.insert(key).second) continue;
    const auto dot = key.find('.');
    const std::string section = key.substr(0, dot), name = dot == std::string::npos ? "" : key.substr(dot + 1);
    const auto sec = sc.section_params.find(section);
    const Params* p = section == "topology" ? &sc.topology : sec == sc.section_params.end() ? nullptr : &sec->second;
    std::cerr << fmt::format("podnet: note: --set {}= (nothing after '=') drops the key from the scenario: {}\n", key,
                             p && p->has(name) ? fmt::format("it takes its default, {}", p->text(name))
                                               : std::string("its default applies"));
  }
  // A key the scenario or --set keeps against the GPU preset (NVLink, server power): once per key, as above.
  for (const auto& [key, values] : sc.gpu_kept) {
    if (!said.insert("gpu:" + key).second) continue;
    const std::string gpu = sc.section("workload").get_string("gpu");
    if (key == "server.power")
      std::cerr << fmt::format("podnet: note: server.power stays {}, as the scenario or --set gives it; an 8-GPU {} "
                               "server draws {} (NVIDIA's DGX specification; --set server.power={} uses it)\n",
                               values.first, gpu, values.second, values.second);
    else
      std::cerr << fmt::format(
          "podnet: note: {} stays {} GB/s, as the scenario or --set gives it; workload.gpu {} has {} GB/s per "
          "direction (--set {}={}GB/s runs the GPU's)\n",
          key, values.first, gpu, values.second, key, values.second);
  }
  return sc;
}

scenario::Setup load_setup(const Common& c, const std::string& command, const RunLabel& label,
                           std::optional<topology::Topology> fabric) {
  scenario::Setup s = scenario::resolve(load_scenario(c), std::move(fabric));
  // A deployment preset: say which of its keys the scenario or the command line kept, and that its
  // congestion control and PFC are the packet engine's.
  if (const std::string& preset = s.scenario.section("network").get_string("preset"); preset != "none") {
    const engine::NetworkPreset* p = engine::find_network_preset(preset);
    for (const auto& [key, value] : s.scenario.preset_kept) {
      std::string theirs;
      if (p)
        for (const auto& [k, v] : p->keys)
          if (std::string("network.") + k == key) theirs = v;
      std::cerr << fmt::format(
          "podnet: note: network.preset {}: {} stays {}, as the scenario or --set gives it (a preset fills only "
          "the keys left out{})\n",
          preset, key, value, theirs.empty() ? "" : fmt::format("; --set {}={} runs the preset's", key, theirs));
    }
    if (!engine::engine_info(s.engine).traits.packet_faults)
      std::cerr << fmt::format(
          "podnet: note: network.preset {}: its congestion control and PFC apply on the {} engine only; the {} "
          "engine takes its routing\n",
          preset, engine::engine_names_with(&engine::EngineTraits::packet_faults), s.engine);
  } else if (!engine::engine_info(s.engine).traits.packet_faults) {
    // Keys only the packet engine reads, given for a run on another engine at other than their defaults (a
    // resolved scenario, such as optimize's design files, writes every key out): say they do nothing here.
    const auto is_default = [&](const std::string& key) {
      const std::vector<ParamSpec> specs = engine::network_params();
      const std::string sub = key.substr(key.find('.') + 1);
      for (const auto& spec : specs) {
        if (spec.name != sub) continue;
        std::string canonical, expected;
        return parse_param(spec, spec.default_text, canonical, expected) &&
               canonical == s.scenario.section("network").text(sub);
      }
      return false;
    };
    std::vector<std::string> unused;
    for (const char* k :
         {"network.cc", "network.pfc", "network.link_credits", "network.link_retry", "network.partitioned",
          "network.switch_buffer", "network.ecn_kmin", "network.ecn_kmax", "network.ecn_pmax", "network.rto"})
      if ((s.scenario.from_set.count(k) || s.scenario.lines.count(k)) && !is_default(k)) unused.emplace_back(k);
    if (!unused.empty())
      std::cerr << fmt::format("podnet: note: {} appl{} on the {} engine only; {} the {} engine "
                               "(--engine {} to use {})\n",
                               fmt::join(unused, ", "), unused.size() == 1 ? "ies" : "y",
                               engine::engine_names_with(&engine::EngineTraits::packet_faults),
                               command == "resolve" ? "the scenario runs on" : "this run uses", s.engine,
                               engine::engine_names_with(&engine::EngineTraits::packet_faults),
                               unused.size() == 1 ? "it" : "them");
  }
  if (engine::engine_info(s.engine).traits.packet_faults && s.network.packet.partitioned) {
    // A fabric that does not split: the threads have nothing to share (packet/partition.hpp).
    if (engine::packet::partition_unit_count(s.fabric) == 1)
      std::cerr << "podnet: note: network.partitioned: this fabric is one partition (a torus, or one leaf group "
                   "whose servers reach every leaf), so one thread runs it"
                << (mpi::world().size > 1 ? " and the other ranks wait" : "")
                << "; its results are another draw next to "
                   "the sequential engine's (--set network.partitioned=false runs that one)\n";
  }
  if (engine::engine_info(s.engine).traits.packet_faults && s.network.packet.partitioned) {
    if (command == "train")
      std::cerr << "podnet: note: network.partitioned: a training iteration gains little from partitions yet (its "
                   "windows are mostly quiet, and the busy ones short), so it often runs slower than on the "
                   "sequential engine (network.partitioned=false)\n";
    const int cores = mpi::cores_per_rank();
    if (s.network.flow.threads > cores)
      std::cerr << fmt::format("podnet: note: network.threads {} is more than the {} {} on this machine; "
                               "the threads wait for each other at every window, so a thread without a core of its "
                               "own slows the run (0 takes the cores)\n",
                               s.network.flow.threads, plural(cores, "core", "cores"),
                               mpi::world().size > 1 ? "each rank has" : (cores == 1 ? "there is" : "there are"));
  }
  // A multi-plane fabric (topology/planes.hpp) under per-flow routing: each flow has one plane of its NIC.
  if (command == "bench" || command == "train") {
    const routing::PolicyInfo* policy = routing::find_policy(s.network.routing.policy);
    // Spray splits every flow; the packet engine's per-packet policies send each packet on a free port.
    const bool spreads =
        policy && (policy->kind == routing::PolicyKind::Spray || (engine::engine_info(s.engine).traits.packet_faults &&
                                                                  policy->per_packet != routing::PerPacket::None));
    if (policy && s.fabric.nic_planes > 1 && !spreads)
      std::cerr << fmt::format("podnet: note: {} routing keeps each flow on one plane of its NIC, 1/{} of it; "
                               "network.routing=spray spreads it over every plane (the packet engine: "
                               "network.preset=mrc)\n",
                               s.network.routing.policy, s.fabric.nic_planes);
    if (policy && policy->path_set && s.fabric.nic_planes <= 1)
      std::cerr << fmt::format("podnet: note: {} routing on a fabric of one plane: its paths spread over the "
                               "switches only (server.nic_planes splits each NIC into planes)\n",
                               s.network.routing.policy);
  }
  // mpirun (core/mpi_world.hpp): only the partitioned packet engine shares a run among the ranks.
  if ((command == "bench" || command == "train") && mpi::world().size > 1 &&
      !(engine::engine_info(s.engine).traits.packet_faults && s.network.packet.partitioned))
    std::cerr << fmt::format("podnet: note: mpirun: each of the {} ranks ran this whole run; only the partitioned "
                             "packet engine shares one run among ranks (--engine packet --set "
                             "network.partitioned=true)\n",
                             mpi::world().size);
  // Unreliable delivery sends no ACK: an algorithm that acts on ACKs has nothing to act on. (Each transport of
  // --compare-cc is a "bench <name> (i of n)" here.)
  const bool packet_run = (command.rfind("bench", 0) == 0 || command == "train") &&
                          engine::engine_info(s.engine).traits.packet_faults;
  const engine::packet::Delivery delivery = engine::packet::delivery_from(s.network.packet.delivery);
  if (packet_run && delivery == engine::packet::Delivery::Unreliable) {
    const std::string cc = s.network.packet.cc != "auto" ? s.network.packet.cc : s.network.transport.default_cc;
    if (engine::packet::cc_preset(cc).acks)
      std::cerr << fmt::format("podnet: note: network.delivery=unreliable sends no ACKs, so {} has nothing to act on: "
                               "every sender sends at its line rate, as with network.cc=none, and what the network "
                               "drops or trims is lost (the 'lost, never resent' column)\n",
                               cc);
  }
  // A kernel-stack transport (TCP: its stack slower than RDMA's) over a lossless fabric: podnet's default is PFC on
  // for every transport; such fabrics usually run lossy.
  if (packet_run && s.network.transport.stack_latency > engine::kRdmaStackLatency && s.network.packet.pfc &&
      !s.scenario.from_set.count("network.pfc") && !s.scenario.lines.count("network.pfc"))
    std::cerr << fmt::format("podnet: note: network.transport {} with PFC on (podnet's default for every transport): "
                             "the switches pause instead of dropping, as on a lossless RoCE fabric; {} fabrics "
                             "usually run lossy: --set network.pfc=false\n",
                             s.network.transport.name, s.network.transport.name);
  // Trimming under PFC: a lossless fabric never drops, so it never trims, and the algorithm's recovery never runs.
  if (packet_run) {
    const std::string cc = s.network.packet.cc != "auto" ? s.network.packet.cc : s.network.transport.default_cc;
    if (engine::packet::cc_preset(cc).trim && s.network.packet.pfc)
      std::cerr << fmt::format("podnet: note: {} with PFC on: the switches pause instead of dropping, so nothing is "
                               "trimmed and {}'s trimming and selective resend never run; --set network.pfc=false "
                               "(or the uec preset) runs it as Ultra Ethernet does\n",
                               cc, cc);
  }
  // Ordered delivery (packet_options.hpp: Delivery) under per-packet routing: one path per QP, or discards.
  if (packet_run && delivery == engine::packet::Delivery::Ordered) {
    const routing::PolicyInfo* policy = routing::find_policy(s.network.routing.policy);
    if (policy && policy->per_packet == routing::PerPacket::Entropy)
      std::cerr << fmt::format("podnet: note: network.delivery=ordered: {} routing keeps one entropy value per QP, so "
                               "each QP takes one path (Ultra Ethernet's ordered mode does not spray)\n",
                               s.network.routing.policy);
    else if (policy && policy->per_packet != routing::PerPacket::None)
      std::cerr << fmt::format("podnet: note: network.delivery=ordered: {} routing sends a QP's packets on several "
                               "paths, and a packet that arrives beyond a hole is discarded and sent again "
                               "(go-back-N); network.delivery=unordered keeps it in the NIC's reorder buffer\n",
                               s.network.routing.policy);
  }
  if (engine::engine_info(s.engine).traits.packet_faults) {
    // An ECN band for a congestion control that reads no marks (swift, timely, hpcc, rccc, none): it does nothing.
    const std::string cc = s.network.packet.cc != "auto" ? s.network.packet.cc : s.network.transport.default_cc;
    const engine::packet::CcPreset& mine = engine::packet::cc_preset(cc);
    // A congestion control of another transport: a what-if the user may not have meant.
    const std::string& transport = s.network.transport.name;
    if (cc != s.network.transport.default_cc) {
      const engine::packet::CcPreset& its = engine::packet::cc_preset(s.network.transport.default_cc);
      std::string why;
      if (its.credits && !mine.credits)
        why = fmt::format("this transport's fabric runs credit-based links (network.cc {}, its default); this runs "
                          "{} over its headers as a what-if",
                          its.name, cc);
      else if (mine.credits && !its.credits) {
        std::string home;  // the transport whose own congestion control this is
        for (const auto& t : engine::transport_presets())
          if (t.default_cc == cc) home = t.name;
        why = fmt::format("{}'s link credits on {}'s links make them lossless without PFC (a what-if){}", cc, transport,
                          home.empty() ? "" : fmt::format("; network.transport={} models that fabric", home));
      } else if (mine.cnp && !its.cnp)
        why = fmt::format("{} answers marks with CNPs from the receiving NIC, as RoCE NICs do; {} runs {} (its "
                          "default)",
                          cc, transport, its.name);
      if (!why.empty())
        std::cerr << fmt::format("podnet: note: network.cc {} with network.transport {}: {}\n", cc, transport, why);
    }
    std::vector<std::string> given;
    for (const char* k : {"network.ecn_kmin", "network.ecn_kmax", "network.ecn_pmax"})
      if (s.scenario.from_set.count(k) || s.scenario.lines.count(k)) given.emplace_back(k);
    if (!given.empty() && !mine.ecn)
      std::cerr << fmt::format("podnet: note: {} {} nothing here: network.cc {} reads no ECN marks, so the "
                               "switches mark none (`podnet list` gives each congestion control's band)\n",
                               fmt::join(given, ", "), given.size() == 1 ? "does" : "do", cc);
  }
  // plan-upgrade drains switches under its runs, which the analytical engine cannot: no hint toward it there.
  // --compare-cc runs the packet engine by design: no hint toward another engine there either.
  const auto engine_by = c.set_flags.find("network.engine");
  const bool packet_by_design = engine_by != c.set_flags.end() && engine_by->second == "--compare-cc";
  // An engine asked for on the command line (--engine flow) was chosen over the analytical one: no hint back.
  add_progress_printers(s.network, "podnet " + command, label,
                        packet_by_design
                            ? std::string()
                            : slow_run_hint(s.engine, s.network,
                                            command != "plan-upgrade" && !s.scenario.from_set.count("network.engine")));
  return s;
}

study::Progress study_progress(const std::string& command, RunLabel& label) {
  const auto start = std::chrono::steady_clock::now();
  const bool tty = isatty(STDERR_FILENO) != 0;
  study::Progress p;
  p.run = [&label](const std::string& what) {
    label.what = what;
    label.expected = Time(0);
    label.work.clear();
  };
  p.expect = [&label](Time expected, std::vector<double> work) {
    label.expected = expected;
    label.work = std::move(work);
  };
  p.step = [command, start, tty](size_t done, size_t total, const std::string& what) {
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (tty || wall > 2.0) {
      // Total 0: a search, whose step count is not known ahead: its count alone, and no ETA.
      const size_t of = total == 0 ? done : total;
      std::cerr << fmt::format("podnet {}: [{}{}] {} done ({})\n", command, done,
                               total == 0 ? std::string() : "/" + std::to_string(total), what,
                               report::elapsed_and_eta(static_cast<int64_t>(done), static_cast<int64_t>(of), wall));
    }
  };
  return p;
}

report::RunContext context_of(const scenario::Scenario& sc, const std::string& command) {
  return report::context_of(sc, command);
}

double traffic_share(const std::vector<double>& work, double time_share) {
  if (work.size() < 2) return time_share;
  const double x = std::clamp(time_share, 0.0, 1.0) * static_cast<double>(work.size() - 1);
  const auto k = std::min(static_cast<size_t>(x), work.size() - 2);
  return work[k] + (work[k + 1] - work[k]) * (x - static_cast<double>(k));
}

void add_progress_printers(engine::NetworkOptions& network, std::string command, const RunLabel& label,
                           std::string hint) {
  using clock = std::chrono::steady_clock;
  struct State {
    std::string command, hint;
    clock::time_point start = clock::now();
    clock::time_point last = clock::now();
    bool hinted = false;
    int64_t done = 0, total = 0;  // the transfers the engine last reported finished, of the plan's
    std::string what;             // the label they were counted under: a new label starts at none
    void relabel(const std::string& now) {
      if (now == what) return;
      what = now;
      done = total = 0;
    }
    // Whether a line is due now (5 s into the run, 5 s after the last); the wall seconds so far.
    std::optional<double> due() {
      const auto t = clock::now();
      if (t - start < std::chrono::seconds(5) || t - last < std::chrono::seconds(5)) return std::nullopt;
      last = t;
      return std::chrono::duration<double>(t - start).count();
    }
    void maybe_hint(double elapsed) {
      if (hint.empty() || hinted || elapsed <= 10) return;
      hinted = true;
      std::cerr << command << ": hint: " << hint << "\n";
    }
  };
  auto st = std::make_shared<State>();
  // Simulated time as the reports print it: milliseconds, two decimals, thousands separators ("2,949.50 ms").
  const auto sim = [](Time t) { return report::fixed(t.seconds() * 1e3, 2) + " ms"; };
  st->command = std::move(command);
  st->hint = std::move(hint);
  network.observers.progress_every = 64;  // often enough for the heartbeat's count of a slow engine's transfers
  // "61% of 2,735 transfers done, simulated 2,692.80 ms (12 s elapsed)": the line both printers give while the
  // transfers done say how far the run is. The analytical engine has no clock: it reports time 0, left out.
  const auto done_line = [st, &label, sim](Time now, double elapsed) {
    return fmt::format("{}: {}: {:.0f}% of {} transfers done{} ({:.0f} s elapsed)", st->command, label.what,
                       100.0 * static_cast<double>(st->done) / static_cast<double>(std::max<int64_t>(st->total, 1)),
                       report::thousands(st->total), now.ps > 0 ? ", simulated " + sim(now) : std::string(), elapsed);
  };
  // "simulated T of about E (P%), S s elapsed, about R left": the line both printers give once the run has an
  // estimate of its end.
  const auto estimate_line = [st, &label, sim](Time now, double elapsed) {
    std::string line = fmt::format("{}: {}: simulated {}", st->command, label.what, sim(now));
    if (label.expected.ps <= 0) return line + fmt::format(" so far, {:.0f} s elapsed", elapsed);
    double share = static_cast<double>(now.ps) / static_cast<double>(label.expected.ps);
    // A training iteration's compute costs nothing to simulate, its traffic does: the share of the traffic the
    // estimate puts before this time is how far the work is (the time alone said 99 % with most of it still to
    // come).
    const bool by_work = label.work.size() > 1;
    if (by_work) share = traffic_share(label.work, share);
    // Far past the estimate (timeouts resending, a congestion collapse): a ratio, not "396415%".
    if (share >= 2)
      return line + fmt::format(", {}x the estimate of {}{}, {:.0f} s elapsed", report::thousands(std::llround(share)),
                                sim(label.expected), by_work ? " (by its traffic)" : "", elapsed);
    // Below 1 % in hundredths (a packet run of hours moves 0.01 % a line), and from the first line a rough
    // projection at the pace so far, in the unit a person plans with.
    line += fmt::format(" of about {} ({:.{}f}%{}), {:.0f} s elapsed", sim(label.expected), 100 * share,
                        share < 0.01 ? 2 : 0, by_work ? " of its traffic" : "", elapsed);
    const auto human = [](double sec) {
      if (sec < 120) return fmt::format("{:.0f} s", sec);
      if (sec < 2 * 3600) return fmt::format("{:.0f} min", sec / 60);
      if (sec < 48 * 3600) return fmt::format("{:.1f} h", sec / 3600);
      return fmt::format("{:.1f} days", sec / 86400);
    };
    if (share > 0 && share < 1)  // up to 2 % a projection at the pace so far, then an estimate
      line +=
          fmt::format(", {}about {} left", share <= 0.02 ? "at this pace " : "", human(elapsed * (1 - share) / share));
    return line;
  };
  network.observers.progress = [st, &label, done_line, estimate_line](int64_t done, int64_t total, Time now) {
    st->relabel(label.what);
    st->done = done;
    st->total = total;
    const auto elapsed = st->due();
    if (!elapsed) return;
    // With an estimate of the end (a large flow run), the share of its traffic says more than the transfers done:
    // the last tenth of them took most of a 131,072-GPU iteration's time.
    std::cerr << (label.expected.ps > 0 && now.ps > 0 ? estimate_line(now, *elapsed) : done_line(now, *elapsed))
              << "\n";
    st->maybe_hint(*elapsed);
  };
  network.observers.heartbeat = [st, &label, done_line, estimate_line](Time now) {
    if (now.ps <= 0) return;  // the analytical engine has no clock to show
    st->relabel(label.what);  // counts from another run (several steps at once report only heartbeats) go
    const auto elapsed = st->due();
    if (!elapsed) return;
    // No estimate of the end: the transfers finished say how far it is (computes cost nothing to simulate; the
    // network's transfers take the time).
    std::cerr << (label.expected.ps <= 0 && st->total > 0 ? done_line(now, *elapsed) : estimate_line(now, *elapsed))
              << "\n";
    st->maybe_hint(*elapsed);
  };
}

std::string slow_run_hint(const std::string& engine, const engine::NetworkOptions& o, bool analytical) {
  // The engine that simulates every packet: a long run's first question is whether it needs to.
  if (engine::engine_info(engine).traits.packet_faults)
    return std::string(
               "the packet engine simulates every packet, queue and pause: its time grows with the bytes "
               "the job moves, a minute for 16 GPUs' data-parallel gradients of an 8B model, hours for "
               "thousands of GPUs; --set network.engine=flow times the same iteration in seconds (flows share "
               "links at their fair rates, no packets), network.engine=analytical faster still; keep the packet "
               "engine for "
               "congestion control, PFC and queue studies") +
           (o.packet.partitioned ? ""
                                 : "; --set network.partitioned=true runs it on every core (the same results on any "
                                   "thread count; a busy fabric's pods run side by side)");
  if (!engine::engine_info(engine).traits.rate_quantum || o.flow.quantum.ps != 0) return {};
  // Without the analytical engine (plan-upgrade drains switches under its runs) nothing is left to offer: its runs
  // are training iterations, which the quantum below barely speeds up.
  if (!analytical) return {};
  return std::string("--set network.engine=analytical gives a first answer in seconds, even at 131,072 GPUs (each "
                     "operation alone: operations running at once do not share links there). ") +
         "The flow engine re-solves rates at every completion. Where many small flows run at once (an all-to-all), "
         "--set network.flow_quantum=100ns lets completions within 100 ns share one re-solve, each late by less than "
         "100 ns: a 261,632-flow all-to-all went from 314 s to 2.8 s. A training iteration's collectives gain little "
         "from it.";
}

Bytes parse_size(const std::string& text, const char* option) { return report::parse_size(text, option); }

std::vector<Bytes> bench_sizes(const std::string& min, const std::string& max, double factor) {
  return study::size_series(parse_size(min, "--min"), parse_size(max, "--max"), factor);
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');) {
    const auto a = item.find_first_not_of(' '), b = item.find_last_not_of(' ');
    if (a != std::string::npos) out.push_back(item.substr(a, b - a + 1));
  }
  return out;
}

std::ofstream open_out(const std::string& path) {
  std::ofstream f(mpi::output_path(path), std::ios::binary);  // (under mpirun, rank 0 writes)
  if (!f) throw InputError(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
  return f;
}

void close_out(std::ofstream& f, const std::string& option, const std::string& path) {
  f.flush();
  const bool ok = static_cast<bool>(f);
  const int err = errno;
  f.close();
  if (!ok || !f)
    throw InputError(fmt::format("{} {}: writing failed ({}); the file is incomplete", option, path,
                                 err != 0 ? std::strerror(err) : "I/O error"));
}

void write_out(const std::string& option, const std::string& path, const std::string& text) {
  std::ofstream f = open_out(path);
  f << text;
  close_out(f, option, path);
}

namespace {

[[noreturn]] void refuse_output(const std::string& option, const std::string& path, const std::string& why) {
  throw InputError(fmt::format("{} {}: cannot write there: {}", option, path, why));
}

// Creates `dir` and its parents when missing; refuses when it, or one of its parents, is not a directory.
void make_output_dir(const std::string& option, const std::string& path, const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(dir, ec);
  if (fs::is_directory(st)) return;
  if (fs::exists(st)) refuse_output(option, path, fmt::format("{} is a file, not a directory", dir.string()));
  fs::create_directories(dir, ec);
  if (!ec) return;
  for (fs::path p = dir.parent_path(); !p.empty() && p != p.root_path(); p = p.parent_path()) {
    std::error_code e2;
    const fs::file_status ps = fs::status(p, e2);
    if (fs::exists(ps) && !fs::is_directory(ps))
      refuse_output(option, path, fmt::format("{} is a file, not a directory", p.string()));
  }
  refuse_output(option, path, fmt::format("cannot create the directory {}: {}", dir.string(), ec.message()));
}

// Creates and removes a file in `dir`: the one check that holds for permissions, read-only mounts and full
// quotas alike (access(2) answers yes to root on a read-only mount's permissions).
void probe_output_dir(const std::string& option, const std::string& path, const std::filesystem::path& dir) {
  std::string name = (dir / ".podnet-write-check-XXXXXX").string();
  const int fd = ::mkstemp(name.data());
  if (fd < 0)
    refuse_output(option, path, fmt::format("cannot create files in {}: {}", dir.string(), std::strerror(errno)));
  ::close(fd);
  ::unlink(name.c_str());
}

}  // namespace

void check_output_file(const std::string& option, const std::string& path) {
  namespace fs = std::filesystem;
  if (path.empty()) return;
  const fs::path p(path);
  std::error_code ec;
  const fs::file_status st = fs::status(p, ec);
  if (fs::is_directory(st)) refuse_output(option, path, "it is a directory; expected a file name");
  if (fs::is_regular_file(st)) {
    FILE* f = std::fopen(path.c_str(), "a");  // appending nothing leaves the file as it is
    if (!f) refuse_output(option, path, std::strerror(errno));
    std::fclose(f);
    return;
  }
  if (fs::exists(st)) return;  // a device or a pipe (/dev/stdout, a process substitution): written as it is
  if (!p.has_filename()) refuse_output(option, path, "it names a directory; expected a file name");
  const fs::path parent = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  make_output_dir(option, path, parent);
  probe_output_dir(option, path, parent);
}

void check_output_dir(const std::string& option, const std::string& path) {
  if (path.empty()) return;
  make_output_dir(option, path, std::filesystem::path(path));
  probe_output_dir(option, path, std::filesystem::path(path));
}

namespace {

// doc[key]'s rows (an object's members carry their name in `key_column`) with the document's headline figures,
// each a JSON pointer into `doc`, as columns on every row: a script reads one file and needs no JSON beside it.
nlohmann::json rows_with_headline(const nlohmann::json& doc, const std::string& key, const std::string& key_column,
                                  const std::vector<std::pair<std::string, std::string>>& headline) {
  nlohmann::json rows = nlohmann::json::array();
  const nlohmann::json& t = doc[key];
  for (auto it = t.begin(); it != t.end(); ++it) {
    nlohmann::json row = nlohmann::json::object();
    if (t.is_object()) row[key_column] = it.key();
    if (it->is_object()) row.update(*it);
    for (const auto& [column, pointer] : headline)
      if (const nlohmann::json::json_pointer p(pointer); doc.contains(p)) row[column] = doc[p];
    rows.push_back(std::move(row));
  }
  return {{"rows", rows}};
}

// --format csv: a tidy table of the command's main rows where it has one (README, output formats), else key,value.
void write_csv(const std::string& stem, const nlohmann::json& doc, std::ostream& out) {
  if (stem == "bench")  // the console table's order
    report::write_tidy_csv(doc, "rows", "bytes", out,
                           {"time_us", "algbw_gbyte_per_s", "busbw_gbyte_per_s", "algorithm", "protocol", "channels",
                            "nccl_model_us"});
  else if (stem == "compare") report::write_tidy_csv(doc, "rows", "transport", out);
  else if (stem == "train" && doc.contains("jobs")) report::write_tidy_csv(doc, "jobs", "name", out);
  else if (stem == "train" && doc.contains("stages_ms") && doc["stages_ms"].is_array()) {
    // One row per pipeline stage (per rank for a Chakra trace), its parts with their unit, and the step they add
    // up to: a plot needs no JSON beside it.
    const std::string key = doc.contains("chakra") ? "rank" : "stage";
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& s : doc["stages_ms"]) {
      nlohmann::json row = nlohmann::json::object();
      double total = 0;
      for (auto it = s.begin(); it != s.end(); ++it)
        if (it.key() == key) row[key] = it.value();
        else if (it.value().is_number()) {
          row[it.key() + "_ms"] = it.value();
          total += it.value().get<double>();
        }
      row["step_ms"] = report::round_to(total, 6);
      // The job's headline figures on every row, so a script needs no JSON beside it either.
      for (const char* k : {"iteration_time_ms", "mfu", "tokens_per_second"})
        if (doc.contains(k) && doc[k].is_number()) row[k] = doc[k];
      rows.push_back(row);
    }
    report::write_tidy_csv(nlohmann::json{{"rows", rows}}, "rows", key, out);
  } else if (stem == "reliability" && doc.contains("by_component") && !doc["by_component"].empty()) {
    // The console table's columns first, then the job's headline (its MTBI, interruptions, the checkpoint advice
    // and its inputs, goodput, and the job's own interval when given): every figure the table shows.
    nlohmann::json rows =
        rows_with_headline(doc, "by_component", "component",
                           {{"job_mtbi_hours", "/mtbi_hours"},
                            {"job_expected_interruptions", "/expected_interruptions"},
                            {"job_interruption_probability", "/interruption_probability"},
                            {"job_checkpoint_cost_minutes", "/checkpoint/checkpoint_cost_minutes"},
                            {"job_restart_cost_minutes", "/checkpoint/restart_cost_minutes"},
                            {"job_checkpoint_interval_minutes", "/checkpoint/interval_minutes"},
                            {"job_young_interval_minutes", "/checkpoint/young_interval_minutes"},
                            {"job_goodput", "/checkpoint/goodput"},
                            {"job_days_to_train_with_failures", "/days_to_train_with_failures"},
                            {"job_your_interval_minutes", "/checkpoint/yours/interval_minutes"},
                            {"job_your_goodput", "/checkpoint/yours/goodput"},
                            {"job_your_days_to_train_with_failures", "/checkpoint/yours/days_to_train_with_failures"}});
    // In the table's order (the components' `order`), not by name.
    std::stable_sort(rows["rows"].begin(), rows["rows"].end(), [](const nlohmann::json& a, const nlohmann::json& b) {
      return a.value("order", 0) < b.value("order", 0);
    });
    report::write_tidy_csv(rows, "rows", "component", out,
                           {"label", "count", "mtbf_hours", "interrupts", "recovery_seconds", "share",
                            "expected_failures", "expected_interruptions"});
  } else if (stem == "diagnose" && doc.contains("suspects") && !doc["suspects"].empty()) {
    // Each suspect, then what the run sent and lost and how long localizing took.
    report::write_tidy_csv(rows_with_headline(doc, "suspects", "",
                                              {{"run_probes_sent", "/sent"},
                                               {"run_probes_lost", "/lost"},
                                               {"run_time_to_localize_seconds", "/time_to_localize_seconds"}}),
                           "rows", "", out);
  } else if (stem == "optimize" && doc.contains("candidates") && !doc["candidates"].empty()) {
    // One row per candidate kept after pruning, whether it is on the front and its design file: the ids are the
    // table's and the files' (design-0009.yaml is id 9).
    std::map<int64_t, std::string> on_front;
    for (const auto& f : doc["front"]) on_front[f["id"].get<int64_t>()] = f.value("design_file", std::string());
    nlohmann::json rows = nlohmann::json::array();
    for (nlohmann::json c : doc["candidates"]) {
      const auto it = on_front.find(c["id"].get<int64_t>());
      c["on_front"] = it != on_front.end();
      if (it != on_front.end()) c["design_file"] = it->second;
      rows.push_back(c);
    }
    report::write_tidy_csv(nlohmann::json{{"rows", rows}}, "rows", "id", out,
                           {"label", "on_front", "capex_usd", "power_kw", "iteration_time_ms", "days_to_train",
                            "objective_value", "dominated_by", "design_file"});
  } else report::write_flat_csv(doc, out);
}

}  // namespace

// `table` with, after its header line, the --config-add fragments the run applied (they change the scenario
// as --set does, so a table that did not name them would pass a fitted fragment's values for the scenario's).
std::string config_add_line(const nlohmann::json& doc) {
  if (!doc.contains("run") || !doc["run"].contains("config_add")) return {};
  std::vector<std::string> files;
  for (const auto& f : doc["run"]["config_add"]) files.push_back(f.get<std::string>());
  if (files.empty()) return {};
  return fmt::format("  config-add: {} (merged on the scenario before --set)\n", fmt::join(files, ", "));
}

void write_table_with_adds(const std::function<void(const nlohmann::json&, std::ostream&)>& table,
                           const nlohmann::json& doc, std::ostream& out) {
  const std::string line = config_add_line(doc);
  std::ostringstream s;
  table(doc, s);
  std::string text = s.str();
  if (!line.empty()) {
    const auto nl = text.find('\n');
    text.insert(nl == std::string::npos ? text.size() : nl + 1, line);
  }
  out << report::wrap_prose(text);  // notes and limits within a terminal's width, as tables are
}

nlohmann::json given_options(const Common& c) {
  nlohmann::json options = nlohmann::json::object();
  if (!c.app) return options;
  // Where and how results are written, and how many threads compute them: the same result either way.
  static const std::set<std::string> kNotTheRun = {"--help",
                                                   "--set",
                                                   "--config-add",
                                                   "--format",
                                                   "--out",
                                                   "--max-memory",
                                                   "--html",
                                                   "--trace",
                                                   "--trace-links",
                                                   "--telemetry",
                                                   "--telemetry-interval",
                                                   "--telemetry-all",
                                                   "--cabling-plan",
                                                   "--cost-csv",
                                                   "--netbox",
                                                   "--config-plan",
                                                   "--config-switches",
                                                   "--export",
                                                   "--probes-out",
                                                   "--dir",
                                                   "--results",
                                                   "--columns",
                                                   "--timing",
                                                   "--jobs",
                                                   "--force"};
  std::set<std::string> as_sets;  // options that set a scenario key: the overrides say them
  for (const auto& [key, option] : c.set_flags) as_sets.insert(option);
  for (const CLI::Option* o : c.app->get_options()) {
    if (o->count() == 0 || o->get_lnames().empty()) continue;  // not given, or the positional scenario
    const std::string name = "--" + o->get_lnames().front();
    if (kNotTheRun.count(name) || as_sets.count(name)) continue;
    const std::vector<std::string>& given = o->results();
    if (o->get_expected_max() == 0) options[name] = o->as<bool>();                  // a flag
    else if (given.size() == 1 && given.front() == o->get_default_str()) continue;  // as if not given
    else if (given.size() == 1) options[name] = given.front();
    else options[name] = given;
  }
  return options;
}

void emit(const Common& c, const scenario::Scenario& sc, const nlohmann::json& given_doc, const std::string& stem,
          const std::function<void(const nlohmann::json&, std::ostream&)>& table_only,
          const std::function<void(const nlohmann::json&, std::ostream&)>& other) {
  // The options that repeat the run, beside its --set overrides (a document a command wrote has them as a
  // document the study registry wrote does: report/studies.cpp, run_study).
  nlohmann::json options = given_options(c);
  nlohmann::json with_options;
  if (!options.empty() && given_doc.contains("run") && given_doc["run"].is_object() &&
      !given_doc["run"].contains("options")) {
    with_options = given_doc;
    with_options["run"]["options"] = std::move(options);
  }
  const nlohmann::json& doc = with_options.is_null() ? given_doc : with_options;
  const auto table = [&table_only](const nlohmann::json& d, std::ostream& out) {
    write_table_with_adds(table_only, d, out);
  };
  const bool is_other = other && c.format != "table" && c.format != "json" && c.format != "csv";
  if (c.format == "json") report::write_json(doc, std::cout);
  else if (c.format == "csv") write_csv(stem, doc, std::cout);
  else if (is_other) other(doc, std::cout);
  else table(doc, std::cout);
  if (!c.out_dir.empty()) {
    check_output_dir("--out", c.out_dir);  // checked before the run too; created here if removed since
    const std::filesystem::path dir(c.out_dir);
    {
      const std::string path = (dir / (stem + ".json")).string();
      auto f = open_out(path);
      report::write_json(doc, f);
      close_out(f, "--out", path);
    }
    {
      const std::string path = (dir / (stem + ".csv")).string();
      auto f = open_out(path);
      write_csv(stem, doc, f);
      close_out(f, "--out", path);
    }
    {
      const std::string path = (dir / (stem + ".txt")).string();
      auto f = open_out(path);
      table(doc, f);
      close_out(f, "--out", path);
    }
    { write_out("--out", (dir / "scenario.resolved.yaml").string(), sc.resolved_yaml(true)); }
    std::string also;
    if (is_other) {
      const std::string path = (dir / (stem + "." + c.format + ".txt")).string();
      auto f = open_out(path);
      other(doc, f);
      close_out(f, "--out", path);
      also = ", " + (dir / (stem + "." + c.format + ".txt")).string();
    }
    // Paths joined as paths: `--out results/` said results//design.json.
    std::cerr << fmt::format("podnet: wrote {}, {}, {}{}, {}\n", (dir / (stem + ".json")).string(),
                             (dir / (stem + ".csv")).string(), (dir / (stem + ".txt")).string(), also,
                             (dir / "scenario.resolved.yaml").string());
  }
}

void report_telemetry(const study::TelemetryResult& t, const std::string& dir) { report_telemetry(t, dir, false); }

void add_telemetry_all_option(CLI::App* cmd, bool& all_ports) {
  cmd->add_flag("--telemetry-all", all_ports,
                "with --telemetry: write every port of the fabric into metrics.prom / metrics.om, also those that "
                "carried nothing (by default they are left out: all zero)");
}

void report_telemetry(const study::TelemetryResult& t, const std::string& dir, bool all_ports) {
  if (!t.recorder) {
    if (!dir.empty())
      std::cerr << "podnet: --telemetry records the packet engine's ports and QPs and the flow engine's links; "
                   "this run's engine records nothing (use --engine packet or flow)\n";
    return;
  }
  telemetry::write_summary(*t.recorder, std::cerr);
  for (const auto& s : t.storms) {
    std::cerr << fmt::format("PFC storm: {} has paused {} for {:.2f} ms ({:.1f}% of the run, {} PAUSE frames); "
                             "paused tree of {}:\n",
                             t.recorder->topology().nodes[s.nic].name,
                             engine::dir_link_name(t.recorder->topology(), s.port), s.paused_s * 1e3, 100 * s.share,
                             thousands(static_cast<int64_t>(s.pause_frames)),
                             plural(static_cast<int64_t>(s.tree.size()), "port", "ports"));
    for (const auto& p : s.tree)
      std::cerr << fmt::format("  depth {}: {} paused {:.2f} ms\n", p.depth,
                               engine::dir_link_name(t.recorder->topology(), p.link), p.paused_s * 1e3);
  }
  for (const auto& s : t.drifts) {
    std::cerr << fmt::format("drifted thresholds: {} marks or pauses off the fabric's configuration at {}:\n",
                             t.recorder->topology().nodes[s.node].name,
                             plural(static_cast<int64_t>(s.ports.size()), "port", "ports"));
    for (const auto& p : s.ports) {
      const std::string link = engine::dir_link_name(t.recorder->topology(), p.link);
      if (p.what == "xoff_high")
        std::cerr << fmt::format("  {}: shared-buffer watermark {:.0f} B above the configured XOFF limit {:.0f} B "
                                 "(pauses later than configured)\n",
                                 link, p.observed, p.expected_lo);
      else
        std::cerr << fmt::format("  {}: {:.0f} ECN marks where the configured band gives {:.0f} to {:.0f} (marks {} "
                                 "than configured)\n",
                                 link, p.observed, p.expected_lo, p.expected_hi,
                                 p.what == "ecn_early" ? "earlier" : "later");
    }
  }
  if (dir.empty()) return;
  const auto files = telemetry::write_dir(*t.recorder, dir, all_ports);
  std::cerr << "podnet: wrote telemetry to " << (std::filesystem::path(dir) / "").string() << " (";
  for (size_t i = 0; i < files.size(); ++i) std::cerr << (i ? ", " : "") << files[i];
  std::cerr << ")\n";
  const telemetry::PortCoverage cov = telemetry::port_coverage(*t.recorder, all_ports);
  if (cov.written < cov.ports)
    std::cerr << fmt::format("podnet: the metrics files hold the {} that carried traffic; the other {} of the "
                             "fabric's {} carried nothing and were left out (--telemetry-all writes every port)\n",
                             plural(static_cast<int64_t>(cov.written), "port", "ports"),
                             report::thousands(cov.ports - cov.written), report::thousands(cov.ports));
}

void add_telemetry_options(CLI::App* cmd, std::string& dir, std::string& interval) {
  cmd->add_option("--telemetry", dir,
                  "write telemetry into DIR: per-port counters and queue depth over time, per-QP FCT and rate "
                  "(packet engine), link utilization over time (flow engine) as CSV, and metrics.prom / "
                  "metrics.om (Prometheus / OpenMetrics text: node_exporter and SONiC exporter names on the packet "
                  "engine, podnet_link_* bytes and utilization on the flow engine)")
      ->type_name("DIR");
  cmd->add_option("--telemetry-interval", interval, "sampling interval of the packet engine's time series")
      ->capture_default_str();
}

study::TelemetryRequest telemetry_request(const std::string& dir, const std::string& interval) {
  study::TelemetryRequest r;
  r.series = !dir.empty();
  std::string expected;
  Time t;
  if (!parse_time(interval, t, expected) || t.ps <= 0)
    throw InputError(fmt::format("--telemetry-interval {}: expected {}", interval,
                                 expected.empty() ? "a time above 0, e.g. 1us" : expected));
  r.sample_interval = t;
  return r;
}

void add_study_options(CLI::App* cmd, StudyOptions& o) {
  // One option per name: studies that share one (train's and jobs' --allow-oom) share its help.
  std::vector<std::pair<const report::StudyParam*, std::vector<std::string>>> options;
  for (const auto& st : report::studies())
    for (const auto& p : st.params) {
      if (!(p.fronts & report::kCli)) continue;
      auto it =
          std::find_if(options.begin(), options.end(), [&](const auto& e) { return e.first->option() == p.option(); });
      if (it == options.end()) options.push_back({&p, {st.name}});
      else it->second.push_back(st.name);
    }
  for (const auto& [p, names] : options) {
    std::string who;
    for (const auto& n : names) who += (who.empty() ? "" : ", ") + n;
    std::string help = who + ": " + p->spec.help;
    const std::string option = p->option();
    const std::string spelled = p->flags.empty() ? option : p->flags;
    if (p->spec.type == ParamType::Bool) {
      // A yes/no option is a flag, as train's and run's --allow-oom are: given alone it is true; --allow-oom=false
      // says no. (An option taking a value would swallow the argument after it: "--allow-oom --results x.db".)
      help += p->spec.default_text == "true" ? " (on unless " + option + "=false)" : " (off unless given)";
      cmd->add_flag_function(
          spelled, [&o, option](int64_t n) { o.given[option] = n > 0 ? "true" : "false"; }, help);
    } else {
      if (!p->spec.default_text.empty()) help += " (default " + p->spec.default_text + ")";
      cmd->add_option_function<std::string>(
             spelled, [&o, option](const std::string& v) { o.given[option] = v; }, help)
          ->type_name("VALUE");
    }
  }
}

report::StudyArgs study_args_from(const report::StudyDef& st, const StudyOptions& o,
                                  const std::vector<const report::StudyDef*>& others) {
  std::map<std::string, std::string> given;
  for (const auto& [option, text] : o.given) {
    const auto it = std::find_if(st.params.begin(), st.params.end(), [&](const report::StudyParam& p) {
      return (p.fronts & report::kCli) && p.option() == option;
    });
    if (it != st.params.end()) {
      given[it->spec.name] = text;
      continue;
    }
    bool elsewhere = false;
    for (const auto* other : others)
      for (const auto& p : other->params) elsewhere = elsewhere || ((p.fronts & report::kCli) && p.option() == option);
    if (elsewhere) continue;
    std::string takers;
    for (const auto& s : report::studies())
      for (const auto& p : s.params)
        if ((p.fronts & report::kCli) && p.option() == option) takers += (takers.empty() ? "" : ", ") + s.name;
    // The scenario key the option's name spells, in the study's own section first (--rate: inference.rate), is what
    // to type instead: a command's shortcut flags (podnet inference --rate) are not the study's options.
    std::string key;
    std::string name = option.substr(option.find_first_not_of('-'));
    std::replace(name.begin(), name.end(), '-', '_');
    for (const auto& sec : scenario::sections())
      for (const auto& p : sec.params())
        if (p.name == name && (key.empty() || st.name == sec.name)) key = std::string(sec.name) + "." + name;
    const std::string instead = key.empty() ? "" : fmt::format("; the scenario key: --set {}={}", key, text);
    if (takers.empty())
      throw InputError(fmt::format("{} {}: not an option of the {} study{}", option, text, st.name, instead));
    throw InputError(
        fmt::format("{} {}: not an option of the {} study (it is {}'s){}", option, text, st.name, takers, instead));
  }
  return report::study_args(st, given, [](const report::StudyParam& p) { return p.option(); });
}

}  // namespace podnet::cli
