#include "scenario/scenario.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <yaml-cpp/yaml.h>

#include "cluster/jobs.hpp"
#include "cluster/placement.hpp"
#include "collective/collective.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/rng.hpp"
#include "core/shared_param_error.hpp"
#include "core/units.hpp"
#include "core/version.hpp"
#include "engine/network_params.hpp"
#include "engine/network_presets.hpp"
#include "reliability/draw.hpp"
#include "reliability/inventory.hpp"
#include "reliability/risk.hpp"
#include "reliability/storage.hpp"
#include "routing/policies.hpp"
#include "scenario/estimate.hpp"
#include "scenario/examples.hpp"
#include "scenario/maintenance.hpp"
#include "scenario/yaml_intake.hpp"
#include "topology/address_plan.hpp"
#include "topology/builders.hpp"
#include "workload/inference.hpp"
#include "workload/job.hpp"

namespace podnet::scenario {

const std::vector<SectionInfo>& sections() {
  static const std::vector<SectionInfo> k = {
      {"server", "the GPU server: GPUs, NICs, NVLink, PCIe, power", topology::server_params},
      {"switch", "the switch model used at every tier", topology::switch_params},
      {"cabling", "cable lengths, copper/optical rule, optics and rack power", topology::cabling_params},
      {"cost",
       "prices of switches, NICs, cables and transceivers, energy price and PUE: capex and power cost of `podnet "
       "design` (docs/reference/cost.md)",
       topology::cost_params},
      {"network", "simulation engine, routing policy and transport", engine::network_params},
      {"links", "per link class (nvlink, pcie, ethernet, infiniband, ici): payload efficiency and added latency",
       engine::link_class_params},
      {"collective", "NCCL-style collective options: channels, QPs per connection, ring order",
       collective::option_params},
      {"workload",
       "the training job for `podnet train`: model and GPU presets, TP/PP/DP/EP, batch, efficiency, "
       "token budget",
       workload::workload_params},
      {"inference",
       "the serving layout and request stream for `podnet inference`: TP/PP, replicas (co-located or prefill and "
       "decode pools), batching, arrival rate, prompt and output lengths; the model and GPU are the workload's",
       workload::inference_params},
      {"placement", "how a training job's ranks map to fabric GPUs", cluster::placement_params},
      {"scheduler", "how the cluster scheduler places the scenario's `jobs:` (several jobs on one fabric)",
       cluster::scheduler_params},
      {"reliability", "component failure rates, recovery times and checkpoint costs for `podnet reliability`",
       reliability::reliability_params},
      {"storage",
       "the frontend and storage network as checkpoints use it: frontend NICs per server, the storage's write and "
       "read bandwidth per server, overheads; with frontend NICs, checkpoint write and restart times replace "
       "reliability's constants",
       reliability::storage_params},
      {"frontend",
       "the frontend and storage network: frontend NICs per server, the frontend switch and its oversubscription, "
       "storage nodes and their bandwidth; `podnet design` prices it beside the back end, and checkpoints are "
       "simulated on it",
       topology::frontend_params},
      {"maintenance",
       "rolling upgrades for `podnet plan-upgrade`: the switch tier to upgrade, the batch sizes to compare, how "
       "long a step takes",
       maintenance_params},
      {"addressing",
       "IP pools, ASNs and BGP style of the configuration plan (`podnet design --config-plan`, NetBox IP addresses)",
       topology::addressing_params},
  };
  return k;
}

std::string key_default(const std::string& key) {
  static const std::map<std::string, std::string> defaults = [] {
    std::map<std::string, std::string> m;
    for (const auto& section : sections())
      for (const auto& spec : section.params()) m[std::string(section.name) + "." + spec.name] = spec.default_text;
    return m;
  }();
  const auto at = defaults.find(key);
  return at == defaults.end() ? std::string() : at->second;
}

const std::vector<std::string>& top_keys() {
  static const std::vector<std::string> k = {"schema_version", "name",   "description", "seed",   "topology",
                                             "failures",       "faults", "jobs",        "tenants"};
  return k;
}
const std::vector<std::string>& failure_keys() {
  static const std::vector<std::string> k = {"at", "link", "switch", "gpu", "action", "rate", "factor", "random"};
  return k;
}
const std::vector<std::string>& random_failure_keys() {
  static const std::vector<std::string> k = {"random", "scale", "parts", "from", "until"};
  return k;
}
const std::vector<std::string>& fault_keys() {
  static const std::vector<std::string> k = {"kind",    "link", "switch", "direction", "probability",
                                             "latency", "at",   "period", "down",      "duration",
                                             "kmin",    "kmax", "pmax",   "pfc_alpha"};
  return k;
}

const std::vector<std::string>& tenant_keys() {
  static const std::vector<std::string> k = {"name", "gpus"};
  return k;
}

const std::vector<std::string>& job_keys() {
  static const std::vector<std::string> k = {"name", "gpus", "start", "placement", "workload"};
  return k;
}

namespace {

// A key's help up to its first "; " outside parentheses (the rest is detail), with its parentheses whole.
std::string first_clause(const std::string& help) {
  int depth = 0;
  for (size_t i = 0; i + 1 < help.size(); ++i) {
    depth += help[i] == '(' ? 1 : help[i] == ')' ? -1 : 0;
    if (depth == 0 && help[i] == ';' && help[i + 1] == ' ') return help.substr(0, i);
  }
  return help;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

std::string scalar_text(const YAML::Node& n) {
  if (n.IsScalar()) return n.Scalar();
  if (n.IsSequence()) {
    std::string s = "[";
    for (size_t i = 0; i < n.size(); ++i) s += (i ? ", " : "") + (n[i].IsScalar() ? n[i].Scalar() : std::string("?"));
    return s + "]";
  }
  return "";
}

class Loader {
 public:
  Loader(Scenario& sc, std::string file) : sc_(sc), file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& key, int line, const std::string& msg) const {
    const std::string root = key.substr(0, key.find_first_of(".["));  // --set failures=[...] sets them all
    if (auto f = sc_.from_set.find(key); f != sc_.from_set.end() && !f->second.empty())
      throw InputError(fmt::format("{}: {}", f->second, msg));
    // A key under a map given whole by a flag whose errors have a label (--vary KEY, an optimize option).
    if (auto f = sc_.from_set.find(root); f != sc_.from_set.end() && !f->second.empty())
      throw InputError(fmt::format("{}{}: {}", f->second, key.substr(root.size()), msg));
    if (sc_.from_set.count(key) || sc_.from_set.count(root) || sc_.sections_from_set.count(key))
      throw InputError(fmt::format("--set {}: {}", key, msg));
    if (auto f = sc_.from_fragment.find(key); f != sc_.from_fragment.end())
      throw InputError(fmt::format("{}:{}: {}: {}", f->second.first, f->second.second, key, msg));
    // A key inside a section or list a fragment gave whole (its `failures:`): the fragment's file, at the
    // node's own line (the node was read from that file).
    if (auto f = sc_.from_fragment.find(root); f != sc_.from_fragment.end())
      throw InputError(fmt::format("{}:{}: {}: {}", f->second.first, line > 0 ? line : f->second.second, key, msg));
    if (line > 0) throw InputError(fmt::format("{}:{}: {}: {}", file_, line, key, msg));
    throw InputError(fmt::format("{}: {}: {}", file_, key, msg));
  }

  int line_of(const YAML::Node& n) const { return n.Mark().line >= 0 ? n.Mark().line + 1 : 0; }

  // Validates a map section against specs; records lines.
  Params read_section(const YAML::Node& node, const std::string& section, const std::vector<ParamSpec>& specs,
                      const std::vector<std::string>& extra_keys = {}) {
    Params p;
    std::vector<std::string> names;
    for (const auto& s : specs) names.push_back(s.name);
    if (node && !node.IsNull() && !node.IsMap())
      fail(section, line_of(node), "expected a map of keys (e.g. `" + section + ":` followed by indented keys)");
    if (node && node.IsMap()) {
      for (auto it = node.begin(); it != node.end(); ++it) {
        const std::string key = it->first.Scalar();
        const std::string path = section + "." + key;
        const int line = line_of(it->first);
        sc_.lines[path] = line;
        if (std::find(extra_keys.begin(), extra_keys.end(), key) != extra_keys.end()) continue;
        auto spec = std::find_if(specs.begin(), specs.end(), [&](const ParamSpec& s) { return s.name == key; });
        if (spec == specs.end()) {
          // Keys that moved to another section: name the new one.
          static const std::pair<const char*, const char*> kMoved[] = {
              {"reliability.link_recovery", "network.local_repair (a failure routed around where it happens)"},
              {"reliability.switch_recovery", "network.convergence (a failure the routing protocol routes around)"}};
          for (const auto& [was, now] : kMoved)
            if (path == was) fail(path, line, fmt::format("unknown key: it is now {}", now));
          // The family changed on the command line over a file written for another: the file's shape keys stay.
          if (section == "topology" && sc_.from_set.count("topology.family") && !sc_.from_set.count(path))
            fail(path, line,
                 fmt::format("not a key of topology.family {} (--set topology.family changes the family but keeps "
                             "the file's other topology keys); give the whole section instead, e.g. --set "
                             "'topology={{family: {}, gpus: 8192}}', or --set {}= to drop this key; {}'s keys: {}",
                             sc_.family, sc_.family, path, sc_.family, join(names)));
          std::vector<std::string> all = names;
          all.insert(all.end(), extra_keys.begin(), extra_keys.end());
          // Digits alone: a number split at its thousands separator inside a { } map (`gpus: 4,096` reads as
          // gpus: 4 and a key 096).
          if (!key.empty() && key.find_first_not_of("0123456789") == std::string::npos)
            fail(path, line,
                 fmt::format("unknown key '{}': inside {{ }} a comma ends a value, so a number written with "
                             "thousands separators (4,096) splits in two; write it without them (4096)",
                             key));
          std::string hint = closest(key, all);
          fail(path, line,
               fmt::format("unknown key{}; expected one of: {}", hint.empty() ? "" : " (did you mean '" + hint + "'?)",
                           join(all)));
        }
        const YAML::Node v = it->second;
        if (!(v.IsScalar() || (spec->type == ParamType::IntList && v.IsSequence())))
          fail(path, line,
               fmt::format("expected {} (a single value), got a {}", param_type_name(spec->type),
                           v.IsMap()        ? "map"
                           : v.IsSequence() ? "list"
                                            : "null"));
        std::string canonical, expected;
        auto value = parse_param(*spec, scalar_text(v), canonical, expected);
        // An optional key given as `auto`, as `podnet list keys` shows its default: left out (worked out at run
        // time), so `--set topology.p=auto` undoes a file's value.
        if (!value && spec->optional && scalar_text(v) == "auto") continue;
        if (!value) {
          // A misspelt choice (a model, a GPU, a policy): a family's stem (`dcqcn`) names its members, else the
          // nearest one.
          const std::string near = spec->type == ParamType::String && !spec->choices.empty()
                                       ? closest_quoted(scalar_text(v), spec->choices)
                                       : "";
          // A number as podnet prints it ("4,096"): say to leave the separator out.
          const std::string text = scalar_text(v);
          const bool separated = (spec->type == ParamType::Int || spec->type == ParamType::Real) &&
                                 text.find(',') != std::string::npos &&
                                 text.find_first_not_of("0123456789,.") == std::string::npos;
          fail(path, line,
               fmt::format("'{}' is not valid{}: expected {}{}", text,
                           near.empty() ? "" : " (did you mean " + near + "?)", expected,
                           separated ? " (write numbers without thousands separators)" : ""));
        }
        p.set(key, *value, canonical);
      }
    }
    for (const auto& s : specs) {
      if (p.has(s.name)) continue;
      if (s.default_text.empty()) {
        if (s.optional) continue;
        fail(section + "." + s.name, line_of(node),
             fmt::format("missing required key ({}: {})", param_type_name(s.type), s.help));
      }
      std::string canonical, expected;
      auto value = parse_param(s, s.default_text, canonical, expected);
      p.set(s.name, *value, canonical);
    }
    return p;
  }

  void load(YAML::Node root) {
    if (!root.IsMap()) throw InputError(fmt::format("{}: expected a YAML map with schema_version and topology", file_));
    std::vector<std::string> top = top_keys();
    for (const auto& s : sections()) top.push_back(s.name);
    for (auto it = root.begin(); it != root.end(); ++it) {
      const std::string key = it->first.Scalar();
      sc_.lines[key] = line_of(it->first);
      if (std::find(top.begin(), top.end(), key) == top.end()) {
        std::string hint = closest(key, top);
        // A section's key at the top level (`model:` not indented under `workload:`): name the section.
        std::vector<std::string> owners, dotted;
        for (const auto& s : sections())
          for (const auto& spec : s.params())
            if (spec.name == key) {
              owners.push_back(fmt::format("`{}:`", s.name));
              dotted.push_back(std::string(s.name) + "." + key);
            }
        fail(key, line_of(it->first),
             owners.empty() && hint.empty() ? fmt::format("unknown key; expected one of: {}", join(top))
             : owners.empty() ? fmt::format("unknown key (did you mean '{}'?); expected one of: {}", hint, join(top))
             : sc_.from_set.count(key)
                 // On the command line there is nothing to indent: the key takes its section's name.
                 ? fmt::format("unknown key; it is a key of {}: write {}", join(owners), fmt::join(dotted, " or "))
                 : fmt::format("unknown key at the top level; it is a key of {}: indent it under its section (two "
                               "spaces)",
                               join(owners)));
      }
    }
    if (!root["schema_version"])
      throw InputError(fmt::format("{}: schema_version: missing required key; expected `schema_version: 1`", file_));
    if (scalar_text(root["schema_version"]) != "1")
      fail("schema_version", sc_.lines["schema_version"],
           fmt::format("'{}' is not supported: expected 1 (this is podnet {})", scalar_text(root["schema_version"]),
                       version()));
    if (root["name"]) sc_.name = scalar_text(root["name"]);
    if (root["description"]) sc_.description = scalar_text(root["description"]);
    if (root["seed"]) {
      ParamSpec seed{"seed", ParamType::Int, "1", "", 0, 9.2e18};
      std::string canonical, expected;
      auto v = parse_param(seed, scalar_text(root["seed"]), canonical, expected);
      if (!v) fail("seed", sc_.lines["seed"], "expected " + expected);
      sc_.seed = static_cast<uint64_t>(std::get<int64_t>(*v));
    }
    const YAML::Node topo = root["topology"];
    if (!topo)
      throw InputError(fmt::format("{}: topology: missing required section; expected `topology:` with "
                                   "`family:` (one of: {})",
                                   file_, family_names()));
    if (!topo.IsMap()) fail("topology", sc_.lines["topology"], "expected a map with `family:` and its parameters");
    if (!topo["family"])
      fail("topology.family", sc_.lines["topology"], "missing required key; expected one of: " + family_names());
    sc_.family = scalar_text(topo["family"]);
    const topology::BuilderInfo* b = topology::find_builder(sc_.family);
    if (!b) {
      std::vector<std::string> names;
      for (const auto& x : topology::builders()) names.push_back(x.name);
      std::string hint = closest(sc_.family, names);
      fail("topology.family", line_of(topo["family"]),
           fmt::format("unknown family '{}'{}; expected one of: {}", sc_.family,
                       hint.empty() ? "" : " (did you mean '" + hint + "'?)", family_names()));
    }
    sc_.topology = read_section(topo, "topology", b->params(), {"family"});
    if (root["failures"]) read_failures(root["failures"]);
    if (root["faults"]) read_faults(root["faults"]);
    for (const auto& s : sections()) sc_.section_params[s.name] = read_section(root[s.name], s.name, s.params());
    auto_dp(sc_.section_params["workload"]);
    apply_recipe(sc_.section_params["workload"], root["workload"], "workload");
    apply_network_preset(sc_.section_params["network"], root["network"]);
    apply_gpu_nvlink(root["server"]);
    apply_gpu_power(root["server"]);
    if (root["jobs"]) read_jobs(root["jobs"], root["workload"]);
    if (root["tenants"]) read_tenants(root["tenants"]);
    derive_family_keys();
    // A routing policy for another family (ugal on a fat-tree) is refused here, at its key, not at the first route.
    const std::string& policy = sc_.section_params["network"].get_string("routing");
    if (const routing::PolicyInfo* info = routing::find_policy(policy);
        info && !routing::policy_applies(*info, sc_.family))
      fail("network.routing", sc_.lines.count("network.routing") ? sc_.lines["network.routing"] : 0,
           fmt::format("policy '{}' applies to {} topologies, not to {}topology.family {}; expected one of: {}", policy,
                       info->families, sc_.name.empty() ? "" : sc_.name + "'s fabric, ", sc_.family,
                       policies_for(sc_.family)));
    // Checks the types cannot make (failure-rate syntax, a zero checkpoint cost), so
    // every command refuses a bad `reliability:` value, not only `podnet reliability`.
    try {
      (void)reliability::config_from(sc_.section_params["reliability"]);
    } catch (const ParamError& e) {
      const auto dot = e.key().find('.');
      const std::string sub = dot == std::string::npos ? e.key() : e.key().substr(dot + 1);
      fail(e.key(), line_of(root["reliability"][sub]), e.what());
    }
    try {  // overlapping pools, refused by every command
      (void)topology::addressing_from(sc_.section_params["addressing"]);
    } catch (const ParamError& e) {
      fail(e.key(), line_of(root["addressing"][e.key().substr(e.key().find('.') + 1)]), e.what());
    }
  }

  // Keys the family derives from others (builders.hpp), written in so that every study shows what is built.
  void derive_family_keys() {
    const topology::BuilderInfo* b = topology::find_builder(sc_.family);
    if (!b || !b->derive) return;
    // topology.gpus given (the file or --set) and derived otherwise (fat_tree's topology.k sizes the tree): the
    // given count would be dropped without a word, so it is refused, as a torus refuses gpus its dims do not hold.
    const bool gpus_given = sc_.lines.count("topology.gpus") || sc_.from_set.count("topology.gpus");
    const int64_t given = gpus_given ? sc_.topology.get_int("gpus") : 0;
    // The same for switch.radix, which k sets: a radix on the command line, or one in the file beside a k in the
    // file, is refused when k builds another; a --set topology.k over a file's radix wins, as its help says.
    const bool radix_set = sc_.from_set.count("switch.radix") != 0;
    const bool radix_given = radix_set || (sc_.lines.count("switch.radix") && !sc_.from_set.count("topology.k"));
    const int64_t radix = radix_given ? sc_.section_params["switch"].get_int("radix") : 0;
    b->derive(sc_.topology, sc_.section_params["server"], sc_.section_params["switch"]);
    if (radix_given && sc_.section_params["switch"].get_int("radix") != radix && sc_.topology.has("k"))
      fail("switch.radix", radix_set ? 0 : sc_.lines.at("switch.radix"),
           fmt::format("switch.radix = {}, but topology.k = {} builds the k-ary fat tree of radix-{} switches; "
                       "expected switch.radix left out, or topology.k dropped (--set topology.k=) to size the fat "
                       "tree by topology.gpus and switch.radix",
                       radix, sc_.topology.get_int("k"), sc_.topology.get_int("k")));
    if (gpus_given && sc_.topology.get_int("gpus") != given && sc_.topology.has("k"))
      fail("topology.gpus", sc_.lines.count("topology.gpus") ? sc_.lines.at("topology.gpus") : 0,
           fmt::format("topology.gpus = {}, but topology.k = {} builds the k-ary fat tree of {} GPUs; expected "
                       "topology.gpus left out, or topology.k dropped (--set topology.k=) to size the fat tree by "
                       "topology.gpus and switch.radix",
                       thousands(given), sc_.topology.get_int("k"), thousands(sc_.topology.get_int("gpus"))));
  }

  // A built-in preset's value for `key` of `specs`, parsed; Error naming `who` when podnet's own table is wrong.
  static std::pair<ParamValue, std::string> preset_value(const std::vector<ParamSpec>& specs, const std::string& key,
                                                         const std::string& text, const std::string& who) {
    auto spec = std::find_if(specs.begin(), specs.end(), [&](const ParamSpec& s) { return s.name == key; });
    std::string canonical, expected;
    auto value = spec == specs.end() ? std::nullopt : parse_param(*spec, text, canonical, expected);
    if (!value) throw Error(fmt::format("{}: key {} '{}' is not valid", who, key, text));
    return {*value, canonical};
  }

  // The model preset's recipe (workload::Recipe) on the keys the scenario leaves to defaults: a group of keys
  // applies whole when the scenario gives none of them (workload.recipe: scenario), or when the command line
  // gives none of them (workload.recipe: preset). Records which keys it set (Scenario::recipe_keys).
  void apply_recipe(Params& p, const YAML::Node& node, const std::string& path) {
    const workload::Recipe* r = workload::find_recipe(p.get_string("model"));
    if (!r) return;
    const bool preset = p.get_string("recipe") == "preset";
    const std::vector<ParamSpec> specs = workload::workload_params();
    // The scenario gives key k (the file, or the command line over a preset recipe).
    const auto gives = [&](const std::string& k) {
      return preset ? sc_.from_set.count(path + "." + k) != 0 : (node && node.IsMap() && node[k]);
    };
    for (const auto& [group, all_keys] : workload::recipe_groups()) {
      // A key given at the recipe's own value leaves the group whole (--set workload.bytes_per_grad=4 over a
      // recipe that says 4 changes nothing; it dropped the group's recompute and ZeRO).
      const auto recipe_text = [&, name = group](const std::string& k) -> std::string {
        for (const auto& g : r->groups)
          if (g.name == name)
            for (const auto& [rk, text] : g.keys)
              if (rk == k) return preset_value(specs, k, text, fmt::format("model preset {}: recipe", r->model)).second;
        return {};
      };
      bool given = false;
      for (const auto& k : all_keys) {
        if (!gives(k)) continue;
        const std::string same = recipe_text(k);
        given = given || same.empty() || !p.has(k) || p.text(k) != same;
      }
      if (given) continue;
      // The preset's layout replaces the file's: the file's dp was written for that layout (aipod-16k's dp 128 for
      // 405B's TP8 x PP16), so unless the command line gives dp it is left out (auto: the fabric's GPUs).
      if (preset && group == "layout" && !gives("dp") && p.has("dp") &&
          std::any_of(r->groups.begin(), r->groups.end(), [](const auto& g) { return g.name == "layout"; }))
        p.erase("dp");
      for (const auto& g : r->groups) {
        if (g.name != group) continue;
        for (const auto& [k, text] : g.keys) {
          // given at the recipe's value: the scenario's own key (its line, its provenance)
          if (gives(k)) continue;
          const auto [value, canonical] =
              preset_value(specs, k, text, fmt::format("model preset {}: recipe", r->model));
          p.set(k, value, canonical);
          sc_.recipe_keys[path + "." + k] = r->model;
        }
      }
    }
  }

  // workload.dp: auto, as `podnet list keys` shows its default, is dp left out.
  static void auto_dp(Params& w) {
    if (w.has("dp") && w.text("dp") == "auto") w.erase("dp");
  }

  // A preset's value `text` on key `key` of section `section` (its params `p`, as read `node`) when neither the
  // scenario nor --set gives it: set, and recorded in `set_by` as set by `by`. Given, the value stays; returns the
  // preset's value (canonical) when the given one differs, for the caller's note, else nothing.
  std::optional<std::string> preset_unless_given(Params& p, const YAML::Node& node, const std::vector<ParamSpec>& specs,
                                                 const std::string& section, const std::string& key,
                                                 const std::string& text, const std::string& who,
                                                 std::map<std::string, std::string>& set_by, const std::string& by) {
    const auto [value, canonical] = preset_value(specs, key, text, who);
    if (node && node.IsMap() && node[key])
      return p.text(key) != canonical ? std::optional<std::string>(canonical) : std::nullopt;
    p.set(key, value, canonical);
    set_by[section + "." + key] = by;
    return std::nullopt;
  }

  // The GPU preset's NVLink (workload.gpu, workload::GpuSpec) on server.nvlink_bandwidth when neither the
  // scenario nor --set gives it, so `--set workload.gpu=b200` is a B200 server; a given value stays, and one that
  // differs from the GPU's is recorded (Scenario::gpu_kept) for a note.
  void apply_gpu_nvlink(const YAML::Node& server) {
    const workload::GpuSpec* g = workload::find_gpu(sc_.section_params["workload"].get_string("gpu"));
    if (!g || g->nvlink_bandwidth <= 0) return;
    Params& p = sc_.section_params["server"];
    if (preset_unless_given(p, server, topology::server_params(), "server", "nvlink_bandwidth",
                            fmt::format("{}GB/s", g->nvlink_bandwidth / 1e9), fmt::format("GPU preset {}", g->name),
                            sc_.gpu_keys, "workload.gpu"))
      sc_.gpu_kept["server.nvlink_bandwidth"] = {
          fmt::format("{:g}", p.get_bandwidth("nvlink_bandwidth").bytes_per_second() / 1e9),
          fmt::format("{:g}", g->nvlink_bandwidth / 1e9)};
  }

  // An 8-GPU server's power with the GPU preset's GPUs (workload.gpu) on server.power when neither the scenario nor
  // --set gives it: NVIDIA's DGX system specifications, maximum power (DGX A100 6.5 kW, DGX H100 and DGX H200
  // 10.2 kW, DGX B200 14.3 kW). A given value stays; one that differs is recorded (Scenario::gpu_kept) for a
  // note, as for NVLink: `--set workload.gpu=b200` on a file written for H100 servers had kept 10.2 kW without a
  // word, and the design's power and energy with it. Servers of another GPU count keep server.power.
  void apply_gpu_power(const YAML::Node& server) {
    static const std::map<std::string, std::string> kServerPower = {{"a100", "6.5kW"},
                                                                    {"h100", "10.2kW"},
                                                                    {"h200", "10.2kW"},
                                                                    {"b200", "14.3kW"}};
    const auto it = kServerPower.find(sc_.section_params["workload"].get_string("gpu"));
    Params& p = sc_.section_params["server"];
    if (it == kServerPower.end() || p.get_int("gpus") != 8) return;
    if (const auto dgx = preset_unless_given(p, server, topology::server_params(), "server", "power", it->second,
                                             fmt::format("GPU preset {}", it->first), sc_.gpu_keys, "workload.gpu"))
      sc_.gpu_kept["server.power"] = {p.text("power"), *dgx};
  }

  // A deployment preset (network.preset, engine/network_presets.hpp) on the network keys the scenario
  // (file, fragments, --set) leaves out. Records which keys it set (Scenario::preset_keys).
  void apply_network_preset(Params& p, const YAML::Node& node) {
    const engine::NetworkPreset* preset = engine::find_network_preset(p.get_string("preset"));
    if (!preset) return;
    const std::vector<ParamSpec> specs = engine::network_params();
    for (const auto& [k, text] : preset->keys)
      if (preset_unless_given(p, node, specs, "network", k, text, fmt::format("network preset {}", preset->name),
                              sc_.preset_keys, preset->name))
        sc_.preset_kept[std::string("network.") + k] = p.text(k);
  }

  void read_failures(const YAML::Node& list) {
    const int list_line = line_of(list);
    if (list.IsNull()) return;
    if (!list.IsSequence())
      fail("failures", list_line,
           "expected a list of entries such as `- {at: 12ms, link: \"NODE:PORT\", action: down}`");
    for (size_t i = 0; i < list.size(); ++i) {
      const YAML::Node e = list[i];
      const std::string path = fmt::format("failures[{}]", i);
      const int line = line_of(e);
      if (!e.IsMap()) fail(path, line, "expected a map with at, one of link/switch/gpu, and action (or random: N)");
      FailureSpec f;
      f.line = line;
      if (e["random"]) {
        read_random(e, path, line, f);
        sc_.failures.push_back(f);
        continue;
      }
      if (e["links"] || e["switches"]) {
        read_share(e, path, line, f);
        sc_.failures.push_back(f);
        continue;
      }
      // A share (fraction: or count:) names a class or a tier with links: / switches:; link: / switch: name one
      // device. `{link: leaf-spine, fraction: 1%}` mixes the two: say which key to write.
      for (const char* share : {"fraction", "count"})
        for (const auto& [one, many] : {std::pair{"link", "links"}, {"switch", "switches"}})
          if (e[share] && e[one])
            fail(path + "." + one, line_of(e[one]),
                 fmt::format("{} takes one {}'s name; a share ({}:) of a {} takes {}: write {}: {}", one, one, share,
                             std::string(one) == "link" ? "link class" : "switch tier", many, many,
                             scalar_text(e[one])));
      // An unknown key is checked against every kind of entry's (cont: is count:, of a share), and the list says
      // which keys go together.
      {
        std::vector<std::string> any = failure_keys();
        for (const char* k : {"links", "switches", "fraction", "count"}) any.push_back(k);
        check_keys(e, path, any,
                   "one device (at, link, switch or gpu, action, rate, factor), a share (links or switches, fraction "
                   "or count, at, action, rate) or random: N");
      }
      check_keys(e, path, failure_keys());
      std::string expected;
      if (!e["at"]) fail(path + ".at", line, "missing: expected the time of the event (e.g. at: 5ms)");
      if (!parse_time(scalar_text(e["at"]), f.at, expected))
        fail(path + ".at", line,
             fmt::format("'{}' is not valid: expected the time of the event, {}", scalar_text(e["at"]), expected));
      for (const char* k : {"link", "switch", "gpu"}) {
        if (!e[k]) continue;
        if (!f.target_kind.empty()) fail(path, line, "expected exactly one of link, switch, gpu");
        f.target_kind = k;
        f.target = scalar_text(e[k]);
      }
      if (f.target_kind.empty())
        fail(
            path, line,
            "expected one of link, switch or gpu naming what fails, or random: N (failures drawn from the risk model)");
      f.action = e["action"] ? scalar_text(e["action"]) : "";
      const std::vector<std::string> actions = f.target_kind == "gpu"
                                                   ? std::vector<std::string>{"slow"}
                                                   : std::vector<std::string>{"down", "up", "degrade", "drain"};
      if (!e["action"])
        fail(path + ".action", line,
             fmt::format("missing: expected what happens to the {}: action: one of {}", f.target_kind, join(actions)));
      if (std::find(actions.begin(), actions.end(), f.action) == actions.end())
        fail(path + ".action", line,
             fmt::format("'{}' is not valid for a {}: expected one of: {}", f.action, f.target_kind, join(actions)));
      if (f.action == "degrade" && (!e["rate"] || !parse_bandwidth(scalar_text(e["rate"]), f.rate, expected)))
        fail(path + ".rate", line,
             e["rate"] ? "degrade needs the new rate: " + expected
                       : "degrade needs the new rate, rate: with a unit (such as rate: 100Gbps)");
      // A key another action reads would be silently ignored here.
      if (e["rate"] && f.action != "degrade")
        fail(path + ".rate", line, fmt::format("rate is read by action: degrade only, not by {}", f.action));
      if (e["factor"] && f.action != "slow")
        fail(path + ".factor", line, fmt::format("factor is read by action: slow only, not by {}", f.action));
      if (f.action == "slow") {
        ParamSpec factor{"factor", ParamType::Real, "", "", 1.0, 1000.0};
        std::string canonical;
        auto v = e["factor"] ? parse_param(factor, scalar_text(e["factor"]), canonical, expected) : std::nullopt;
        if (!v)
          fail(path + ".factor", line,
               fmt::format("slow needs a factor >= 1 (the GPU's compute and the delays modelled on it take "
                           "factor x longer){}",
                           e["factor"] ? "" : "; it has none"));
        f.factor = std::get<double>(*v);
      }
      sc_.failures.push_back(f);
    }
  }

  // `jobs:` (JobSpec): each entry's workload keys on top of the scenario's `workload:` section.
  void read_jobs(const YAML::Node& list, const YAML::Node& workload) {
    if (list.IsNull()) return;
    if (!list.IsSequence() || list.size() == 0)
      fail("jobs", line_of(list), "expected a list of jobs such as `- {name: a, gpus: 64, workload: {tp: 8}}`");
    std::set<std::string> names;
    for (size_t i = 0; i < list.size(); ++i) {
      const YAML::Node e = list[i];
      const std::string path = fmt::format("jobs[{}]", i);
      const int line = line_of(e);
      if (!e.IsMap()) fail(path, line, "expected a map with gpus and optionally name, start, placement, workload");
      check_keys(e, path, job_keys());
      JobSpec j;
      j.line = line;
      j.name = e["name"] ? scalar_text(e["name"]) : fmt::format("job{}", i);
      if (j.name.empty() || j.name.find_first_of(" \t/,") != std::string::npos)
        fail(path + ".name", line, fmt::format("'{}': expected a name without spaces, '/' or ','", j.name));
      if (!names.insert(j.name).second)
        fail(path + ".name", line, fmt::format("'{}' names an earlier job too; expected a unique name", j.name));
      std::string canonical, expected;
      ParamSpec gpus{"gpus", ParamType::Int, "", "", 1, 1048576};
      auto g = e["gpus"] ? parse_param(gpus, scalar_text(e["gpus"]), canonical, expected) : std::nullopt;
      if (!g) fail(path + ".gpus", line, "expected the job's GPU count, an integer in [1, 1048576]");
      j.gpus = std::get<int64_t>(*g);
      if (e["start"] && (!parse_time(scalar_text(e["start"]), j.start, expected) || j.start.ps < 0))
        fail(path + ".start", line, "expected when the job's iteration begins, a time >= 0 (e.g. 5ms); " + expected);
      if (e["placement"]) {
        j.placement = scalar_text(e["placement"]);
        try {
          (void)cluster::parse_scheduler(j.placement);
        } catch (const InputError& err) {
          fail(path + ".placement", line, err.what());
        }
      }
      const YAML::Node own = e["workload"];
      if (own && !own.IsNull() && !own.IsMap())
        fail(path + ".workload", line, "expected a map of `workload:` keys for this job (e.g. {model: llama3-8b})");
      // The scenario's workload keys, then the job's (a key given by both: the job's, read last, wins).
      YAML::Node merged(YAML::NodeType::Map);
      if (workload && workload.IsMap())
        for (auto it = workload.begin(); it != workload.end(); ++it) merged.force_insert(it->first, it->second);
      if (own && own.IsMap())
        for (auto it = own.begin(); it != own.end(); ++it) {
          merged.force_insert(it->first, it->second);
          j.keys.push_back(it->first.Scalar());
        }
      j.workload = read_section(merged, path + ".workload", workload::workload_params());
      auto_dp(j.workload);
      apply_recipe(j.workload, merged, path + ".workload");
      sc_.jobs.push_back(std::move(j));
    }
  }

  // `tenants:` (TenantSpec): names a VRF can carry, and each tenant's GPUs as a count or a share.
  void read_tenants(const YAML::Node& list) {
    if (list.IsNull()) return;
    if (!list.IsSequence() || list.size() == 0)
      fail("tenants", line_of(list), "expected a list of tenants such as `- {name: research, gpus: 50%}`");
    std::set<std::string> names;
    for (size_t i = 0; i < list.size(); ++i) {
      const YAML::Node e = list[i];
      const std::string path = fmt::format("tenants[{}]", i);
      const int line = line_of(e);
      if (!e.IsMap()) fail(path, line, "expected a map with name and gpus, such as {name: research, gpus: 50%}");
      check_keys(e, path, tenant_keys());
      TenantSpec t;
      t.line = line;
      if (!e["name"]) fail(path + ".name", line, "missing: expected the tenant's name, e.g. name: research");
      t.name = scalar_text(e["name"]);
      // The VRF is "Vrf-" + name, a Linux interface name of at most 15 characters.
      const bool ok = !t.name.empty() && t.name.size() <= 11 && std::all_of(t.name.begin(), t.name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
      });
      if (!ok)
        fail(path + ".name", line,
             fmt::format("'{}': expected 1 to 11 lower-case letters, digits or '-' (its VRF, Vrf-NAME, is a Linux "
                         "interface name of at most 15 characters)",
                         t.name));
      if (t.name == "default" || t.name == "mgmt")
        fail(path + ".name", line,
             fmt::format("'{}' is reserved (the routers' own default and management VRFs); expected another name",
                         t.name));
      if (!names.insert(t.name).second)
        fail(path + ".name", line, fmt::format("'{}' names an earlier tenant too; expected a unique name", t.name));
      const std::string g = e["gpus"] ? scalar_text(e["gpus"]) : "";
      std::string canonical, expected;
      if (!g.empty() && g.back() == '%') {
        char* end = nullptr;
        const double pct = std::strtod(g.c_str(), &end);
        if (end != g.c_str() + g.size() - 1 || !(pct > 0) || pct > 100)
          fail(path + ".gpus", line, fmt::format("'{}': expected a share in (0%, 100%] or a GPU count", g));
        t.fraction = pct / 100;
      } else {
        ParamSpec count{"gpus", ParamType::Int, "", "", 1, 1048576};
        auto v = g.empty() ? std::nullopt : parse_param(count, g, canonical, expected);
        if (!v)
          fail(path + ".gpus", line, "expected the tenant's GPUs: a count in [1, 1048576] or a share such as 50%");
        t.gpus = std::get<int64_t>(*v);
      }
      sc_.tenants.push_back(std::move(t));
    }
  }

  void read_faults(const YAML::Node& list) {
    if (list.IsNull()) return;
    if (!list.IsSequence())
      fail("faults", line_of(list),
           "expected a list of entries such as `- {kind: drop, link: \"SWITCH:PORT\", probability: 0.001}`");
    for (size_t i = 0; i < list.size(); ++i) {
      const YAML::Node e = list[i];
      const std::string path = fmt::format("faults[{}]", i);
      const int line = line_of(e);
      if (!e.IsMap()) fail(path, line, "expected a map with kind, link or switch, and the fault's figure");
      check_keys(e, path, fault_keys());
      FaultSpec f;
      f.line = line;
      static const std::vector<std::string> kinds = {"drop", "corrupt",   "degrade",
                                                     "flap", "pfc_storm", "drifted_thresholds"};
      f.kind = e["kind"] ? scalar_text(e["kind"]) : "";
      if (std::find(kinds.begin(), kinds.end(), f.kind) == kinds.end())
        fail(path + ".kind", line,
             fmt::format("'{}' is not a fault podnet hides: expected one of: {} (silent drop, corruption, added "
                         "latency, a flapping link, a NIC stuck sending PFC PAUSE, a switch with drifted ECN/PFC "
                         "thresholds)",
                         f.kind, join(kinds)));
      for (const char* k : {"link", "switch"}) {
        if (!e[k]) continue;
        if (!f.target_kind.empty()) fail(path, line, "expected exactly one of link, switch");
        f.target_kind = k;
        f.target = scalar_text(e[k]);
      }
      if (f.target_kind.empty()) fail(path, line, "expected link: \"SWITCH:PORT\" (or a NIC) or switch: NAME");
      if (f.kind == "flap" && f.target_kind != "link") fail(path + ".switch", line, "a flap is a link's");
      if (f.kind == "drifted_thresholds" && f.target_kind != "switch")
        fail(path + ".link", line, "drifted_thresholds are a switch's: name it as switch: NAME");
      if (f.kind != "drifted_thresholds")
        for (const char* k : {"kmin", "kmax", "pmax", "pfc_alpha"})
          if (e[k]) fail(path + "." + k, line, fmt::format("a {} has no {} (drifted_thresholds has)", f.kind, k));
      if (f.kind == "pfc_storm" && f.target_kind != "link")
        fail(path + ".switch", line, "a pfc_storm is sent by a NIC: name it as link: \"NODE/NIC\" (its one link)");
      if (f.kind == "pfc_storm" && e["direction"])
        fail(path + ".direction", line, "a pfc_storm pauses the direction entering the named end; it has no direction");
      if (e["direction"]) {
        f.direction = scalar_text(e["direction"]);
        if (f.target_kind != "link") fail(path + ".direction", line, "direction applies to a link");
        if (f.direction != "tx" && f.direction != "rx" && f.direction != "both")
          fail(path + ".direction", line,
               fmt::format("'{}': expected tx (leaving the named end), rx (entering it) or both", f.direction));
      }
      std::string expected;
      const auto time_key = [&](const char* k, Time& out, bool required, const char* what) {
        if (!e[k]) {
          if (required) fail(path + "." + k, line, fmt::format("a {} needs {}: {}", f.kind, k, what));
          return;
        }
        if (!parse_time(scalar_text(e[k]), out, expected)) fail(path + "." + k, line, expected);
      };
      time_key("at", f.at, false, "");
      if (f.kind == "drop" || f.kind == "corrupt") {
        ParamSpec prob{"probability", ParamType::Real, "", "", 1e-12, 1.0};
        std::string canonical;
        // A percentage as --loss and --fail-links take it (0.1% is 0.001).
        std::string text = e["probability"] ? scalar_text(e["probability"]) : std::string();
        if (!text.empty() && text.back() == '%') {
          char* end = nullptr;
          const double pct = std::strtod(text.c_str(), &end);
          if (end == text.c_str() + text.size() - 1) text = fmt::format("{}", pct / 100);
        }
        auto v = e["probability"] ? parse_param(prob, text, canonical, expected) : std::nullopt;
        if (!v)
          fail(
              path + ".probability", line,
              "expected the probability that a packet crossing it is lost, 1e-12 to 1 or a percentage (0.001 or 0.1%)");
        f.probability = std::get<double>(*v);
      } else if (e["probability"]) {
        fail(path + ".probability", line, fmt::format("a {} has no probability", f.kind));
      }
      if (f.kind == "degrade") {
        time_key("latency", f.latency, true, "the one-way latency it adds (e.g. 50us)");
        if (f.latency.ps <= 0) fail(path + ".latency", line, "expected a latency above 0");
      }
      if (f.kind == "pfc_storm") {
        time_key("duration", f.duration, true, "how long the NIC sends PAUSE frames (e.g. 2ms)");
        if (f.duration.ps <= 0) fail(path + ".duration", line, "expected a duration above 0");
      } else if (e["duration"]) {
        fail(path + ".duration", line, fmt::format("a {} has no duration (pfc_storm has)", f.kind));
      }
      if (f.kind == "drifted_thresholds") {
        for (const char* k : {"kmin", "kmax"}) {
          if (!e[k]) continue;
          Bytes b = 0;
          if (!parse_bytes(scalar_text(e[k]), b, expected) || b < 0)
            fail(path + "." + k, line,
                 fmt::format("expected the ECN marking {} of the switch's ports in bytes (e.g. 100KB): {}",
                             k == std::string("kmin") ? "start" : "end (every packet marked above)", expected));
          (k == std::string("kmin") ? f.kmin : f.kmax) = b;
        }
        if (f.kmin >= 0 && f.kmax >= 0 && f.kmax < f.kmin)
          fail(path + ".kmax", line, "expected kmax >= kmin (the band where marking rises from 0 to pmax)");
        std::string canonical;
        if (e["pmax"]) {
          ParamSpec pm{"pmax", ParamType::Real, "", "", 0.0, 1.0};
          auto v = parse_param(pm, scalar_text(e["pmax"]), canonical, expected);
          if (!v) fail(path + ".pmax", line, "expected the marking probability at kmax, 0 to 1");
          f.pmax = std::get<double>(*v);
        }
        if (e["pfc_alpha"]) {
          ParamSpec pa{"pfc_alpha", ParamType::Real, "", "", 1e-9, 1.0};
          auto v = parse_param(pa, scalar_text(e["pfc_alpha"]), canonical, expected);
          int shift = -1;
          if (v)
            for (int k = 0; k <= 10 && shift < 0; ++k)
              if (std::get<double>(*v) == std::ldexp(1.0, -k)) shift = k;
          if (shift < 0)
            fail(path + ".pfc_alpha", line,
                 "expected the PFC dynamic threshold's alpha as a power of two, 1 to 1/1024 (the fabric's: 0.125)");
          f.dt_shift = shift;
        }
        if (f.kmin < 0 && f.kmax < 0 && f.pmax < 0 && f.dt_shift < 0)
          fail(path, line, "drifted_thresholds need at least one of kmin, kmax, pmax, pfc_alpha");
      }
      // A key another kind reads would be silently ignored here.
      if (f.kind != "degrade" && e["latency"])
        fail(path + ".latency", line, fmt::format("a {} has no latency (degrade has)", f.kind));
      if (f.kind != "flap")
        for (const char* k : {"period", "down"})
          if (e[k]) fail(path + "." + k, line, fmt::format("a {} has no {} (flap has)", f.kind, k));
      if (f.kind == "flap") {
        time_key("period", f.period, true, "how often the link goes down (e.g. 30s)");
        time_key("down", f.down, true, "how long it stays down each time (e.g. 2s)");
        if (f.period.ps <= 0 || f.down.ps <= 0 || f.down.ps > f.period.ps)
          fail(path + ".down", line, "expected 0 < down <= period");
      }
      sc_.faults.push_back(f);
    }
  }

  // `expected`: what the message says is expected, when the list alone does not say which keys go together.
  void check_keys(const YAML::Node& e, const std::string& path, const std::vector<std::string>& keys,
                  const char* expected = nullptr) {
    for (auto it = e.begin(); it != e.end(); ++it) {
      const std::string key = it->first.Scalar();
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
        std::string hint = closest(key, keys);
        fail(path + "." + key, line_of(it->first),
             fmt::format("unknown key{}; expected {}", hint.empty() ? "" : " (did you mean '" + hint + "'?)",
                         expected ? std::string(expected) : "one of: " + join(keys)));
      }
    }
  }

  // {links: CLASS | fabric, fraction: X% | count: N, at: T, action: down | degrade | drain, rate: R}
  // {switches: TIER, fraction: X% | count: N, at: T, action: down | drain}
  void read_share(const YAML::Node& e, const std::string& path, int line, FailureSpec& f) {
    check_keys(e, path, {"links", "switches", "fraction", "count", "at", "action", "rate"});
    if (e["links"] && e["switches"]) fail(path, line, "expected one of links (a link class) or switches (a tier)");
    f.target_kind = e["links"] ? "links" : "switches";
    f.target = scalar_text(e[f.target_kind]);
    if (f.target.empty())
      fail(path + "." + f.target_kind, line,
           f.target_kind == "links"
               ? "expected a link class such as leaf-spine, or fabric (every switch-to-switch link)"
               : "expected a switch tier such as leaf or spine");
    if (e["fraction"].IsDefined() == e["count"].IsDefined())
      fail(path, line,
           fmt::format("expected one of fraction (e.g. 1%) or count (e.g. 4) of the {} that fail", f.target_kind));
    std::string canonical, expected;
    if (e["fraction"]) {
      std::string text = scalar_text(e["fraction"]);
      const bool percent = !text.empty() && text.back() == '%';
      if (percent) text.pop_back();
      char* end = nullptr;
      const double v = text.empty() ? -1 : std::strtod(text.c_str(), &end) / (percent ? 100.0 : 1.0);
      if (text.empty() || end != text.c_str() + text.size() || !(v > 0 && v <= 1))
        fail(path + ".fraction", line,
             fmt::format("'{}' is not valid: expected a share above 0 and at most 100% (e.g. 1%, or 0.01 in a file)",
                         scalar_text(e["fraction"])));
      f.fraction = v;
    } else {
      ParamSpec count{"count", ParamType::Int, "", "", 1, static_cast<double>(topology::kMaxGpus) * 64};
      auto v = parse_param(count, scalar_text(e["count"]), canonical, expected);
      if (!v)
        fail(path + ".count", line, fmt::format("'{}' is not valid: expected {}", scalar_text(e["count"]), expected));
      f.count = std::get<int64_t>(*v);
    }
    if (e["at"] && !parse_time(scalar_text(e["at"]), f.at, expected))
      fail(path + ".at", line, "expected when they fail, " + expected);
    f.action = e["action"] ? scalar_text(e["action"]) : "down";
    const std::vector<std::string> actions = f.target_kind == "links"
                                                 ? std::vector<std::string>{"down", "degrade", "drain"}
                                                 : std::vector<std::string>{"down", "drain"};
    if (std::find(actions.begin(), actions.end(), f.action) == actions.end())
      fail(path + ".action", line,
           fmt::format("'{}' is not valid for {}: expected one of: {}", f.action, f.target_kind, join(actions)));
    if (f.action == "degrade" && (!e["rate"] || !parse_bandwidth(scalar_text(e["rate"]), f.rate, expected)))
      fail(path + ".rate", line,
           e["rate"] ? "degrade needs the new rate: " + expected
                     : "degrade needs the new rate, rate: with a unit (such as rate: 100Gbps)");
    if (e["rate"] && f.action != "degrade")
      fail(path + ".rate", line, fmt::format("rate is read by action: degrade only, not by {}", f.action));
  }

  // {random: N | poisson, scale: X, parts: [...], from: T, until: T}
  void read_random(const YAML::Node& e, const std::string& path, int line, FailureSpec& f) {
    check_keys(e, path, random_failure_keys());
    f.target_kind = "random";
    const std::string what = scalar_text(e["random"]);
    f.target = what;
    if (what == "poisson") {
      f.count = -1;
      ParamSpec scale{"scale", ParamType::Real, "", "", 1e-300, 1e300};
      std::string canonical, expected;
      if (e["scale"]) {
        auto v = parse_param(scale, scalar_text(e["scale"]), canonical, expected);
        if (!v || !(std::get<double>(*v) > 0))
          fail(path + ".scale", line,
               "expected a positive rate multiplier (1 = the risk model's rates, 1e6 = a "
               "million times faster)");
        f.scale = std::get<double>(*v);
      }
    } else {
      ParamSpec count{"random", ParamType::Int, "", "", 0, static_cast<double>(reliability::kMaxDrawn)};
      std::string canonical, expected;
      auto v = parse_param(count, what, canonical, expected);
      if (!v)
        fail(path + ".random", line,
             fmt::format("'{}' is not valid: expected a number of failures (0 to {}) or `poisson` (with scale:)", what,
                         reliability::kMaxDrawn));
      f.count = std::get<int64_t>(*v);
      if (e["scale"]) fail(path + ".scale", line, "scale applies to `random: poisson`, not to a fixed count");
    }
    std::string expected;
    if (e["from"] && !parse_time(scalar_text(e["from"]), f.from, expected))
      fail(path + ".from", line, "expected the start of the window, " + expected);
    if (e["until"] && !parse_time(scalar_text(e["until"]), f.until, expected))
      fail(path + ".until", line, "expected the end of the window, " + expected);
    if (e["until"] && !(f.until > f.from))
      fail(path + ".until", line,
           fmt::format("{} is not after from ({}); expected the end of the window, after its start",
                       format_time(f.until), format_time(f.from)));
    if (e["parts"]) {
      std::vector<std::string> names;
      for (const auto& p : reliability::presets()) names.push_back(p.name);
      const YAML::Node parts = e["parts"];
      if (!parts.IsSequence())
        fail(path + ".parts", line, "expected a list of parts, e.g. [optic, switch]: " + join(names));
      for (const auto& p : parts) {
        const std::string name = scalar_text(p);
        if (std::find(names.begin(), names.end(), name) == names.end()) {
          std::string hint = closest(name, names);
          fail(path + ".parts", line_of(p),
               fmt::format("unknown part '{}'{}; expected some of: {}", name,
                           hint.empty() ? "" : " (did you mean '" + hint + "'?)", join(names)));
        }
        f.parts.push_back(name);
      }
    }
  }

  static std::string policies_for(const std::string& family) {
    std::vector<std::string> names;
    for (const auto& p : routing::policies())
      if (routing::policy_applies(p, family)) names.push_back(p.name);
    return join(names);
  }

  static std::string family_names() {
    std::vector<std::string> names;
    for (const auto& x : topology::builders()) names.push_back(x.name);
    return join(names);
  }

 private:
  Scenario& sc_;
  std::string file_;
};

// YAML leaves a key given twice in one map to the application (yaml-cpp keeps both, and a lookup
// finds one): `gpus: 64` then `gpus: 128`, or two `switch:` sections, is an error naming both lines.
void check_duplicate_keys(const YAML::Node& node, const std::string& prefix, const std::string& file) {
  if (node.IsSequence()) {
    for (size_t i = 0; i < node.size(); ++i) check_duplicate_keys(node[i], fmt::format("{}[{}]", prefix, i), file);
    return;
  }
  if (!node.IsMap()) return;
  std::map<std::string, int> seen;  // key -> 1-based line
  for (auto it = node.begin(); it != node.end(); ++it) {
    const std::string key = it->first.IsScalar() ? it->first.Scalar() : std::string();
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    const int line = it->first.Mark().line + 1;
    if (!it->first.IsScalar()) continue;  // a complex key is refused later as an unknown key
    if (auto [at, fresh] = seen.emplace(key, line); !fresh)
      throw InputError(fmt::format("{}:{}: {}: given twice (first at line {}); expected each key once per map", file,
                                   line, path, at->second));
    check_duplicate_keys(it->second, path, file);
  }
}

void apply_override(YAML::Node& root, const std::string& assignment, Scenario& sc,
                    const std::map<std::string, std::string>& flags) {
  auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError(fmt::format("--set {}: expected KEY.PATH=VALUE (e.g. --set topology.gpus=4096)", assignment));
  std::string path = assignment.substr(0, eq);
  const std::string value = assignment.substr(eq + 1);
  // KEY+=VALUE appends to a list section (failures, faults, jobs): one entry, or each entry of a list.
  const bool append = path.size() > 1 && path.back() == '+';
  if (append) {
    path.pop_back();
    if (path != "failures" && path != "faults" && path != "jobs")
      throw InputError(
          fmt::format("--set {}+=: only the lists failures, faults and jobs take +=; expected KEY=VALUE", path));
    const YAML::Node add = parse_yaml(value, fmt::format("--set {}+=", path));
    YAML::Node list = root[path];
    if (list && !list.IsNull() && !list.IsSequence())
      throw InputError(fmt::format("--set {}+=: the scenario's {} is not a list", path, path));
    YAML::Node out(YAML::NodeType::Sequence);
    if (list && list.IsSequence())
      for (const auto& e : list) out.push_back(e);
    if (add.IsSequence())
      for (const auto& e : add) out.push_back(e);
    else out.push_back(add);
    root[path] = out;
    auto flag = flags.find(path + "+");
    sc.from_set[path] = flag == flags.end() ? "" : flag->second;
    return;
  }
  std::vector<std::string> parts;
  std::stringstream ss(path);
  for (std::string part; std::getline(ss, part, '.');) parts.push_back(part);
  // `--set KEY=` (nothing after =) removes the key: its default applies, or the family's own when a --set
  // changed topology.family over a file written for another.
  if (value.empty()) {
    YAML::Node at = root;
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      const YAML::Node next = static_cast<const YAML::Node&>(at)[parts[i]];
      if (!next || !next.IsMap()) return;  // nothing there to remove
      at.reset(next);
    }
    if (at.remove(parts.back())) sc.dropped.push_back(path);
    return;
  }
  YAML::Node value_node = parse_yaml(value, fmt::format("--set {}", path));
  // Walk down, creating maps as needed (yaml-cpp nodes are handles: assign through a chain).
  std::vector<YAML::Node> chain{root};
  std::string prefix;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    YAML::Node next = chain.back()[parts[i]];
    if (next && !next.IsMap())
      throw InputError(fmt::format("--set {}: '{}' is a value, not a section", path, parts[i]));
    prefix += (prefix.empty() ? "" : ".") + parts[i];
    // A section this --set creates (`--set foo.bar=1` makes `foo`) is blamed on the --set, not on the file.
    if (!next || next.IsNull()) sc.sections_from_set.insert(prefix);
    chain.push_back(next);
  }
  chain.back()[parts.back()] = value_node;
  auto flag = flags.find(path);
  sc.from_set[path] = flag == flags.end() ? "" : flag->second;
}

// Merges fragment map `src` into `dst` (maps key by key, other values replace), recording where each key came from.
void merge_fragment(YAML::Node dst, const YAML::Node& src, const std::string& prefix, const std::string& file,
                    Scenario& sc) {
  for (auto it = src.begin(); it != src.end(); ++it) {
    const std::string key = it->first.Scalar();
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    const int line = it->first.Mark().line >= 0 ? it->first.Mark().line + 1 : 0;
    const bool existed = static_cast<bool>(dst[key]) && !dst[key].IsNull();
    if (it->second.IsMap() && (!existed || dst[key].IsMap())) {
      if (!existed) {
        dst[key] = YAML::Node(YAML::NodeType::Map);
        sc.from_fragment[path] = {file, line};
      }
      merge_fragment(dst[key], it->second, path, file, sc);
    } else {
      dst[key] = it->second;
      sc.from_fragment[path] = {file, line};
    }
  }
}

void apply_fragment(YAML::Node& root, const std::string& file, Scenario& sc) {
  const YAML::Node frag =
      parse_yaml(read_input_file(file, "--config-add " + file, "a YAML file of scenario sections"), file);
  if (!frag || frag.IsNull()) return;  // an empty fragment changes nothing
  if (!frag.IsMap())
    throw InputError(
        fmt::format("{}: a scenario fragment is a YAML map of sections (server:, switch:, network:, ...)", file));
  check_duplicate_keys(frag, "", file);
  for (auto it = frag.begin(); it != frag.end(); ++it) {
    const std::string key = it->first.Scalar();
    const int line = it->first.Mark().line + 1;
    if (key == "schema_version") {
      if (!it->second.IsScalar() || it->second.Scalar() != "1")
        throw InputError(fmt::format("{}:{}: schema_version: expected 1", file, line));
      continue;
    }
    if (key == "name" || key == "description" || key == "seed")
      throw InputError(fmt::format("{}:{}: {}: a fragment changes sections (server, switch, network, ...), not the "
                                   "scenario's {}",
                                   file, line, key, key));
    YAML::Node one(YAML::NodeType::Map);
    one[key] = it->second;
    merge_fragment(root, one, "", file, sc);
    // `one`'s key node is new (no mark): the section's line is the fragment's own.
    if (auto f = sc.from_fragment.find(key); f != sc.from_fragment.end() && line > 0) f->second.second = line;
  }
}

}  // namespace

std::string closest(const std::string& given, const std::vector<std::string>& candidates) {
  // Case does not count (`H100` is h100, `PP` is pp); Megatron-LM's long names of the layout point at podnet's.
  const auto lower = [](std::string s) {
    for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return s;
  };
  const std::string word = lower(given);
  for (const auto& c : candidates)
    if (lower(c) == word) return c;
  static const std::map<std::string, std::string> kLongNames = {{"tensor_parallel", "tp"},
                                                                {"tensor_model_parallel_size", "tp"},
                                                                {"pipeline_parallel", "pp"},
                                                                {"pipeline_model_parallel_size", "pp"},
                                                                {"data_parallel", "dp"},
                                                                {"context_parallel", "cp"},
                                                                {"context_parallel_size", "cp"},
                                                                {"expert_parallel", "ep"},
                                                                {"expert_model_parallel_size", "ep"},
                                                                {"micro_batch_size", "microbatch"},
                                                                {"global_batch_size", "global_batch"},
                                                                {"seq_length", "seq"},
                                                                {"virtual_pipeline_model_parallel_size", "interleave"},
                                                                {"num_layers", "layers"},
                                                                {"hidden_size", "hidden"}};
  if (auto a = kLongNames.find(word); a != kLongNames.end())
    for (const auto& c : candidates)
      if (c == a->second) return c;
  // A word that begins exactly one key (`switch` of `switch_port`): that key.
  std::string prefixed;
  int prefixes = 0;
  for (const auto& c : candidates)
    if (c.size() > word.size() + 1 && c.compare(0, word.size(), word) == 0 && c[word.size()] == '_') {
      prefixed = c;
      ++prefixes;
    }
  if (prefixes == 1) return prefixed;
  // The same parts in another order (`spine-leaf` for leaf-spine, `r0-leaf`): that name, before any that is a
  // few letters away.
  const auto parts = [](const std::string& s) {
    std::vector<std::string> p;
    for (size_t at = 0; at <= s.size();) {
      const size_t end = std::min(s.find_first_of("-_", at), s.size());
      p.push_back(s.substr(at, end - at));
      at = end + 1;
    }
    std::sort(p.begin(), p.end());
    return p;
  };
  if (word.find_first_of("-_") != std::string::npos)
    for (const auto& c : candidates)
      if (parts(lower(c)) == parts(word)) return c;
  // A few letters away: at most a third of the word (plus one) edits, so that a word of its own is not taken for
  // a typo (`colour` was "did you mean 'power'?", three edits of six letters).
  std::string best;
  size_t best_d = (word.size() + 2) / 3 + 1;
  for (const auto& given_c : candidates) {
    const std::string c = lower(given_c);
    std::vector<size_t> prev(c.size() + 1), cur(c.size() + 1);
    for (size_t j = 0; j <= c.size(); ++j) prev[j] = j;
    for (size_t i = 1; i <= word.size(); ++i) {
      cur[0] = i;
      for (size_t j = 1; j <= c.size(); ++j)
        cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (word[i - 1] == c[j - 1] ? 0 : 1)});
      prev.swap(cur);
    }
    if (prev[c.size()] < best_d) {
      best_d = prev[c.size()];
      best = given_c;
    }
  }
  return best;
}

std::string closest_quoted(const std::string& word, const std::vector<std::string>& candidates) {
  std::vector<std::string> family;
  for (const auto& c : candidates)
    if (c.size() > word.size() + 1 && c.compare(0, word.size(), word) == 0 && c[word.size()] == '_')
      family.push_back("'" + c + "'");
  if (!family.empty()) return fmt::format("{}", fmt::join(family, " or "));
  const std::string near = closest(word, candidates);
  return near.empty() ? "" : "'" + near + "'";
}

const Params& Scenario::section(const std::string& n) const {
  auto it = section_params.find(n);
  if (it == section_params.end()) throw Error("internal: no section " + n);
  return it->second;
}

topology::Hardware Scenario::hardware() const {
  try {
    return topology::hardware_from(section("server"), section("switch"), section("cabling"));
  } catch (const ParamError& e) {
    throw InputError(fmt::format("{}: {}", where(e), e.what()));
  }
}

topology::CostModel Scenario::cost_model() const {
  try {
    return topology::cost_from(section("cost"));
  } catch (const ParamError& e) {
    throw InputError(fmt::format("{}: {}", where(e), e.what()));
  }
}

topology::FrontendConfig Scenario::frontend() const {
  try {
    topology::FrontendConfig c = topology::frontend_from(section("frontend"));
    if (c.converged && (lines.count("frontend.storage_nics") || from_set.count("frontend.storage_nics") ||
                        from_fragment.count("frontend.storage_nics")))
      throw ParamError("frontend.storage_nics",
                       "with frontend.converged the storage nodes take back-end server slots and use their NICs "
                       "(server.nics each); expected no frontend.storage_nics, or frontend.converged: false");
    if (c.present() && section("storage").get_int("frontend_nics") > 0)
      throw ParamError("storage.frontend_nics",
                       "storage.frontend_nics and frontend.nics both give the servers' frontend NICs; expected one: "
                       "frontend.nics (the frontend fabric, simulated) or storage.frontend_nics (the closed form)");
    return c;
  } catch (const ParamError& e) {
    throw InputError(fmt::format("{}: {}", where(e), e.what()));
  }
}

topology::FrontendFabric Scenario::build_frontend(int32_t servers) const {
  topology::FrontendConfig c = frontend();
  const int32_t named = servers;
  if (c.converged) {  // the storage nodes are on the back end: the frontend serves the GPU servers alone
    servers = std::max(0, servers - c.storage_nodes);
    c.storage_nodes = 0;
  }
  try {
    return topology::build_frontend(c, servers, hardware(), named);
  } catch (const ParamError& e) {
    throw InputError(fmt::format("{}: {}", where(e), e.what()));
  }
}

topology::FrontendFabric Scenario::build_storage_network(const topology::Topology& backend) const {
  const topology::FrontendConfig c = frontend();
  if (!c.converged) return build_frontend(backend.servers);
  try {
    return topology::build_converged(c, backend);
  } catch (const ParamError& e) {
    throw InputError(fmt::format("{}: {}", where(e), e.what()));
  }
}

std::vector<topology::Tenant> Scenario::plan_tenants(const topology::Topology& t) const {
  std::vector<topology::TenantRequest> requests;
  for (const auto& x : tenants) requests.push_back({x.name, x.gpus, x.fraction});
  try {
    return topology::plan_tenants(t, requests, section("addressing").get_int("asn_base"));
  } catch (const ParamError& e) {
    size_t i = 0;
    while (i < tenants.size() && e.key() != fmt::format("tenants[{}].gpus", i)) ++i;
    throw InputError(i < tenants.size() && !from_set.count("tenants")
                         ? fmt::format("{}:{}: {}: {}", source, tenants[i].line, e.key(), e.what())
                         : fmt::format("--set {}: {}", e.key(), e.what()));
  }
}

topology::Topology Scenario::build_topology() const {
  const topology::Hardware hw = hardware();
  // The memory guard, before anything is built (scenario/estimate.hpp).
  if (topology.has("gpus"))
    estimate::check(estimate::fabric(topology.get_int("gpus")),
                    fmt::format("a fabric of {} GPUs", thousands(topology.get_int("gpus"))));
  try {
    return topology::build(*topology::find_builder(family), topology, hw);
  } catch (const ParamError& e) {
    throw InputError(fmt::format("{}: {}", where(e), e.what()));
  }
}

void Scenario::check_failures(const topology::Topology& t) const { (void)resolve_failures(t, Time(), {}, false); }

std::vector<engine::FailureEvent> Scenario::failure_events(const topology::Topology& t, Time run_length,
                                                           const std::vector<int32_t>& job_gpus) const {
  return resolve_failures(t, run_length, job_gpus, true);
}

bool Scenario::has_random_failures() const {
  for (const auto& f : failures)
    if (f.target_kind == "random") return true;
  return false;
}

namespace {

topology::NodeId find_node(const topology::Topology& t, const std::string& name) {
  for (topology::NodeId n = 0; n < static_cast<topology::NodeId>(t.nodes.size()); ++n)
    if (t.nodes[n].name == name) return n;
  return topology::kNone;
}

// `name` with each number's leading zeros dropped ("gpu-node-0003/nic2" -> "gpu-node-3/nic2"): names pad their
// numbers to the fabric's size, so a name from a larger fabric's docs or plan has more digits.
std::string unpadded(const std::string& name) {
  std::string out;
  for (size_t i = 0; i < name.size();) {
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) {
      out += name[i++];
      continue;
    }
    size_t j = i;
    while (j < name.size() && std::isdigit(static_cast<unsigned char>(name[j]))) ++j;
    while (i + 1 < j && name[i] == '0') ++i;  // at least one digit stays: "000" -> "0"
    out.append(name, i, j - i);
    i = j;
  }
  return out;
}

// " (did you mean 'X'?)" for the closest switch (or any node) name.
std::string suggest_node(const topology::Topology& t, const std::string& name, bool switches_only) {
  std::vector<std::string> names;
  std::string hint;  // the same name with other padding, a name containing the one given ("spine-000" ->
                     // "pod000-spine-000"), else the closest
  const std::string bare = unpadded(name);
  for (const auto& node : t.nodes)
    if ((!switches_only || node.kind == topology::NodeKind::Switch) && unpadded(node.name) == bare) hint = node.name;
  for (const auto& node : t.nodes)
    if (!switches_only || node.kind == topology::NodeKind::Switch) {
      names.push_back(node.name);
      if (hint.empty() && !name.empty() && node.name.find(name) != std::string::npos) hint = node.name;
    }
  if (hint.empty()) hint = closest(name, names);
  return hint.empty() ? std::string() : " (did you mean '" + hint + "'?)";
}

// The switch named `target`; InputError "WHERE.switch: ..." otherwise.
topology::NodeId find_switch(const topology::Topology& t, const std::string& target, const std::string& where_) {
  const topology::NodeId n = find_node(t, target);
  if (n == topology::kNone || t.nodes[n].kind != topology::NodeKind::Switch)
    throw InputError(fmt::format("{}.switch: no switch named '{}'{} (names as in `podnet design --cabling-plan`)",
                                 where_, target, suggest_node(t, target, true)));
  return n;
}

// The network link named by one end: "NODE:PORT" (a switch and its port, as in the cabling plan) or a NIC's
// one network link ("NODE"). Returns the link and the named end; InputError "WHERE.link: ..." otherwise.
std::pair<topology::LinkId, topology::NodeId> find_link(const topology::Topology& t, const std::string& target,
                                                        const std::string& where_) {
  const auto network = [&](topology::LinkId l) {
    return t.links[l].media == topology::Media::Copper || t.links[l].media == topology::Media::Optical;
  };
  const auto colon = target.rfind(':');
  const topology::NodeId n = find_node(t, colon == std::string::npos ? target : target.substr(0, colon));
  topology::LinkId found = topology::kNone;
  int matches = 0;
  if (n != topology::kNone) {
    auto [b, e] = t.incident(n);
    for (auto it = b; it != e; ++it) {
      if (!network(*it)) continue;
      const auto& l = t.links[*it];
      const int32_t port = l.a == n ? l.port_a : l.port_b;
      if (colon == std::string::npos || t.port_name(n, port) == target.substr(colon + 1)) {
        found = *it;
        ++matches;
      }
    }
  }
  if (matches != 1) {
    // A node that exists: its network ports, the first and the last. Otherwise examples from this fabric.
    std::string hint, first_port, last_port, switch_example, nic_example;
    int ports = 0;
    if (n != topology::kNone) {
      auto [b, e] = t.incident(n);
      for (auto it = b; it != e; ++it)
        if (network(*it)) {
          const auto& l = t.links[*it];
          last_port = t.port_name(n, l.a == n ? l.port_a : l.port_b);
          if (++ports == 1) first_port = last_port;
        }
      if (t.nodes[n].kind == topology::NodeKind::Switch && ports > 0)
        hint = fmt::format(" ('{}' has {} network ports, {} to {})", t.nodes[n].name, ports, first_port, last_port);
      else if (ports == 1) hint = fmt::format(" (a NIC's link is named by the NIC alone: '{}')", t.nodes[n].name);
      else if (ports > 1)  // a multi-plane NIC (server.nic_planes): one port per plane
        hint = fmt::format(" ('{}' has {} ports, one per plane: name one, '{}:{}' to '{}:{}')", t.nodes[n].name, ports,
                           t.nodes[n].name, first_port, t.nodes[n].name, last_port);
    } else {
      hint = suggest_node(t, colon == std::string::npos ? target : target.substr(0, colon), false);
    }
    for (topology::LinkId l = 0; l < static_cast<topology::LinkId>(t.links.size()); ++l) {
      if (!network(l)) continue;
      for (const auto& [node, port] : {std::pair{t.links[l].a, t.links[l].port_a}, {t.links[l].b, t.links[l].port_b}}) {
        if (switch_example.empty() && t.nodes[node].kind == topology::NodeKind::Switch)
          switch_example = t.nodes[node].name + ":" + t.port_name(node, port);
        if (nic_example.empty() && t.nodes[node].kind == topology::NodeKind::Nic)
          nic_example = t.nic_planes > 1 ? t.nodes[node].name + ":" + t.port_name(node, port) : t.nodes[node].name;
      }
      if (!switch_example.empty() && !nic_example.empty()) break;
    }
    throw InputError(fmt::format("{}.link: no network link '{}'{}: expected \"SWITCH:PORT\"{} or a NIC name{}{}",
                                 where_, target, hint,
                                 switch_example.empty() ? "" : " (e.g. \"" + switch_example + "\")",
                                 t.nic_planes > 1 ? " and its port" : "",
                                 nic_example.empty() ? "" : " (e.g. \"" + nic_example + "\")"));
  }
  return {found, n};
}

}  // namespace

namespace {

engine::FailureAction action_of(const std::string& a) {
  return a == "down"      ? engine::FailureAction::Down
         : a == "up"      ? engine::FailureAction::Up
         : a == "degrade" ? engine::FailureAction::Degrade
         : a == "drain"   ? engine::FailureAction::Drain
                          : engine::FailureAction::Slow;
}

}  // namespace

// A share of one tier's links or switches (FailureSpec links / switches): the pool in id order, then a partial
// Fisher-Yates shuffle from the entry's own random stream, the chosen ones in id order, one event each.
static std::vector<engine::FailureEvent> draw_share(const topology::Topology& t, const FailureSpec& f, Rng rng,
                                                    const std::string& where_) {
  using topology::NodeKind;
  std::vector<int32_t> pool;  // link ids or switch node ids
  std::vector<std::string> names;
  if (f.target_kind == "links") {
    const bool fabric = f.target == "fabric";
    int cls = -1;
    for (size_t c = 0; c < t.link_classes.size(); ++c) {
      names.push_back(t.link_classes[c]);
      if (t.link_classes[c] == f.target) cls = static_cast<int>(c);
    }
    if (!fabric && cls < 0) {
      // A switch tier given as a link class ("spine"): the classes that end at that tier, and the option that
      // fails the switches themselves.
      const bool is_tier = std::find(t.tier_names.begin() + (t.tier_names.empty() ? 0 : 1), t.tier_names.end(),
                                     f.target) != t.tier_names.end();
      if (is_tier) {
        std::vector<std::string> ending;
        for (const auto& n : names) {
          const size_t dash = n.find('-');
          if (dash != std::string::npos && (n.substr(0, dash) == f.target || n.substr(dash + 1) == f.target))
            ending.push_back(n);
        }
        const bool cli = where_.rfind("--fail-links", 0) == 0;
        throw InputError(fmt::format(
            "{}.links: '{}' is a switch tier, not a link class: {} fails its switches{} (this fabric's link "
            "classes: {})",
            where_, f.target,
            cli ? fmt::format("--fail-switches {}=N", f.target) : fmt::format("{{switches: {}}}", f.target),
            ending.empty() ? "" : fmt::format("; its links are {}", fmt::join(ending, " and ")), join(names)));
      }
      const std::string near = closest(f.target, names);
      throw InputError(fmt::format("{}.links: '{}' is not a link class of this fabric{}: expected fabric (every "
                                   "switch-to-switch link) or one of: {}",
                                   where_, f.target, near.empty() ? "" : " (did you mean '" + near + "'?)",
                                   join(names)));
    }
    for (size_t l = 0; l < t.links.size(); ++l) {
      const auto& k = t.links[l];
      const bool take = fabric ? t.nodes[k.a].kind == NodeKind::Switch && t.nodes[k.b].kind == NodeKind::Switch
                               : k.cls == cls;
      if (take) pool.push_back(static_cast<int32_t>(l));
    }
    if (pool.empty())
      throw InputError(fmt::format("{}.links: this fabric has no switch-to-switch links (its link classes: {})", where_,
                                   join(names)));
  } else {
    int tier = -1;
    for (size_t i = 1; i < t.tier_names.size(); ++i) {
      names.push_back(t.tier_names[i]);
      if (t.tier_names[i] == f.target) tier = static_cast<int>(i);
    }
    if (tier < 0) {
      const std::string near = closest(f.target, names);
      throw InputError(fmt::format("{}.switches: '{}' is not a switch tier of this fabric{}: expected one of: {}",
                                   where_, f.target, near.empty() ? "" : " (did you mean '" + near + "'?)",
                                   names.empty() ? "(it has no switches)" : join(names)));
    }
    for (size_t n = 0; n < t.nodes.size(); ++n)
      if (t.nodes[n].kind == NodeKind::Switch && t.nodes[n].tier == tier) pool.push_back(static_cast<int32_t>(n));
  }
  const int64_t total = static_cast<int64_t>(pool.size());
  const int64_t k = f.count >= 0 ? f.count
                                 : std::max<int64_t>(1, std::llround(f.fraction * static_cast<double>(total)));
  if (k > total)
    throw InputError(fmt::format("{}.count: {} {} asked, but the fabric has {} {} {}", where_, thousands(k),
                                 f.target_kind, thousands(total), f.target, f.target_kind));  // a fraction is <= 1
  for (int64_t i = 0; i < k; ++i) {
    const int64_t j = i + static_cast<int64_t>(rng.below(static_cast<uint64_t>(total - i)));
    std::swap(pool[i], pool[j]);
  }
  pool.resize(static_cast<size_t>(k));
  std::sort(pool.begin(), pool.end());
  // Down at t = 0 means down before the run: routing avoids those links from the start, as a drain at 0 does,
  // instead of sending flows into them and stalling until a repair (engine/failures.hpp).
  const bool before_run = f.at.ps == 0 && f.action == "down";
  const std::string note = before_run ? ", down before the run" : "";
  std::vector<engine::FailureEvent> out;
  // A share that is not a whole number of links or switches says how it was rounded (0.01% of 1,024 links is
  // 0.1: one link, ten times the share asked).
  const double exact = f.fraction * static_cast<double>(total);
  const std::string rounded = f.count < 0 && std::fabs(exact - static_cast<double>(k)) > 1e-9
                                  ? fmt::format(", {}% of {} = {}, rounded {} to {}", format_number(100 * f.fraction),
                                                thousands(total), format_number(exact),
                                                static_cast<double>(k) > exact ? "up" : "down", thousands(k))
                                  : "";
  const std::string group =
      fmt::format("{} of {} {} {}{}", thousands(k), thousands(total), f.target, f.target_kind, rounded);
  for (int32_t id : pool) {
    engine::FailureEvent ev;
    ev.group = group;
    ev.at = f.at;
    ev.action = before_run ? engine::FailureAction::Drain : action_of(f.action);
    ev.rate = f.rate;
    if (f.target_kind == "links") {
      const auto& l = t.links[id];
      ev.links.push_back(id);
      ev.what = fmt::format("link {}:{} ({} {}, {} of {}{}){}{}", t.nodes[l.a].name, t.port_name(l.a, l.port_a),
                            f.target, f.target_kind, thousands(k), thousands(total), rounded, note,
                            ev.action == engine::FailureAction::Degrade ? " degraded to " + format_bandwidth(ev.rate)
                                                                        : std::string());
      if (ev.action == engine::FailureAction::Degrade && ev.rate.bps > l.capacity.bps)
        throw InputError(fmt::format("{}.rate: {} is above the links' speed ({}): degrade lowers a link's rate", where_,
                                     format_bandwidth(ev.rate), format_bandwidth(l.capacity)));
    } else {
      auto [b, e] = t.incident(id);
      for (auto it = b; it != e; ++it) ev.links.push_back(*it);
      ev.what = fmt::format("switch {} ({} of {} {} switches{}){}", t.nodes[id].name, thousands(k), thousands(total),
                            f.target, rounded, note);
    }
    out.push_back(std::move(ev));
  }
  return out;
}

std::vector<engine::FailureEvent> Scenario::resolve_failures(const topology::Topology& t, Time run_length,
                                                             const std::vector<int32_t>& job_gpus, bool draw) const {
  using topology::NodeKind;
  std::vector<engine::FailureEvent> out;
  std::optional<reliability::Inventory> inventory;  // counted once, for random entries
  for (size_t i = 0; i < failures.size(); ++i) {
    const FailureSpec& f = failures[i];
    // Entries from the command line are named by the option that gave them (--fail-links, --fail-switches).
    const auto given = from_set.find("failures");
    const std::string where_ = given == from_set.end()
                                   ? fmt::format("{}:{}: failures[{}]", file_of("failures"), f.line, i)
                               : given->second.empty() ? fmt::format("--set failures[{}]", i)
                                                       : fmt::format("{}: failures[{}]", given->second, i);
    if (f.target_kind == "random") {
      if (!draw) continue;
      reliability::DrawSpec spec;
      spec.count = f.count;
      spec.scale = f.scale;
      spec.from = f.from;
      spec.until = f.until.ps > 0 ? f.until : run_length;
      if (!(spec.until > spec.from))
        throw InputError(fmt::format("{}.until: expected the end of the window to draw failures in{}", where_,
                                     run_length.ps > 0 ? fmt::format(" (after from: {}; the run lasts {})",
                                                                     format_time(f.from), format_time(run_length))
                                                       : " (this command has no run length to default to)"));
      for (const auto& p : reliability::presets())
        if (std::find(f.parts.begin(), f.parts.end(), p.name) != f.parts.end()) spec.parts.push_back(p.part);
      reliability::Config cfg;
      try {
        cfg = reliability::config_from(section("reliability"));
      } catch (const ParamError& e) {
        throw InputError(fmt::format("{}: {}", where(e), e.what()));
      }
      if (!inventory) {
        std::vector<int32_t> ranks = job_gpus;
        if (ranks.empty())
          for (int32_t r = 0; r < static_cast<int32_t>(t.gpus.size()); ++r) ranks.push_back(r);
        inventory = reliability::count_inventory_of(t, ranks, true);
      }
      Rng rng = Rng(seed).stream(fmt::format("failures[{}]", i));
      try {
        for (auto& ev : reliability::draw_failures(t, *inventory, cfg, spec, rng)) out.push_back(std::move(ev));
      } catch (const ParamError& e) {
        throw InputError(fmt::format("{}.{}: {}", where_, e.key(), e.what()));
      }
      continue;
    }
    if (f.target_kind == "links" || f.target_kind == "switches") {
      for (auto& ev : draw_share(t, f, Rng(seed).stream(fmt::format("failures[{}]", i)), where_))
        out.push_back(std::move(ev));
      continue;
    }
    engine::FailureEvent ev;
    ev.at = f.at;
    ev.action = f.action == "down"      ? engine::FailureAction::Down
                : f.action == "up"      ? engine::FailureAction::Up
                : f.action == "degrade" ? engine::FailureAction::Degrade
                : f.action == "drain"   ? engine::FailureAction::Drain
                                        : engine::FailureAction::Slow;
    ev.rate = f.rate;
    ev.factor = f.factor;
    ev.what = f.target_kind + " " + f.target;
    if (ev.action == engine::FailureAction::Slow) ev.what += fmt::format(" slowed x{:g}", ev.factor);
    if (ev.action == engine::FailureAction::Degrade) ev.what += " degraded to " + format_bandwidth(ev.rate);
    if (f.target_kind == "gpu") {
      ParamSpec rank{"gpu", ParamType::Int, "", "", 0, static_cast<double>(t.gpus.size()) - 1};
      std::string canonical, expected;
      auto v = parse_param(rank, f.target, canonical, expected);
      if (!v)
        throw InputError(
            fmt::format("{}.gpu: '{}' is not a GPU of this fabric: expected {}", where_, f.target, expected));
      ev.gpu = static_cast<int32_t>(std::get<int64_t>(*v));
    } else if (f.target_kind == "switch") {
      const topology::NodeId n = find_switch(t, f.target, where_);
      auto [b, e] = t.incident(n);
      for (auto it = b; it != e; ++it) ev.links.push_back(*it);
    } else {
      const topology::LinkId found = find_link(t, f.target, where_).first;
      ev.links.push_back(found);
    }
    if (ev.action == engine::FailureAction::Degrade)
      for (topology::LinkId l : ev.links)
        if (ev.rate.bps > t.links[l].capacity.bps)
          throw InputError(fmt::format(
              "{}.rate: {} is above the speed of {} ({}): degrade lowers a link's rate, expected at most that", where_,
              format_bandwidth(ev.rate), f.target_kind == "switch" ? "a link of " + f.target : f.target,
              format_bandwidth(t.links[l].capacity)));
    out.push_back(std::move(ev));
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.at < b.at; });
  return out;
}

std::vector<diagnose::Fault> Scenario::fault_list(const topology::Topology& t) const {
  std::vector<diagnose::Fault> out;
  for (size_t i = 0; i < faults.size(); ++i) {
    const FaultSpec& f = faults[i];
    if (f.kind == "pfc_storm" || f.kind == "drifted_thresholds") continue;  // the packet engine's, not the probes'
    const std::string where_ = from_set.count("faults")
                                   ? fmt::format("--set faults[{}]", i)
                                   : fmt::format("{}:{}: faults[{}]", file_of("faults"), f.line, i);
    diagnose::Fault x;
    x.kind = f.kind == "drop"      ? diagnose::FaultKind::Drop
             : f.kind == "corrupt" ? diagnose::FaultKind::Corrupt
             : f.kind == "degrade" ? diagnose::FaultKind::Degrade
                                   : diagnose::FaultKind::Flap;
    x.probability = f.probability;
    x.latency = f.latency;
    x.start = f.at;
    x.period = f.period;
    x.down = f.down;
    if (f.target_kind == "switch") {
      x.device = find_switch(t, f.target, where_);
      x.what = fmt::format("{} switch {}", f.kind, f.target);
    } else {
      const auto [l, end] = find_link(t, f.target, where_);
      const routing::DirLink tx = routing::dir_link(l, end, t);
      if (f.direction != "rx") x.dirs.push_back(tx);
      if (f.direction != "tx") x.dirs.push_back(tx ^ 1);
      x.what = fmt::format("{} link {} {}", f.kind, f.target, f.direction);
    }
    out.push_back(std::move(x));
  }
  return out;
}

std::vector<engine::PauseStorm> Scenario::pause_storms(const topology::Topology& t) const {
  std::vector<engine::PauseStorm> out;
  for (size_t i = 0; i < faults.size(); ++i) {
    const FaultSpec& f = faults[i];
    if (f.kind != "pfc_storm") continue;
    const std::string where_ = from_set.count("faults")
                                   ? fmt::format("--set faults[{}]", i)
                                   : fmt::format("{}:{}: faults[{}]", file_of("faults"), f.line, i);
    const auto [l, end] = find_link(t, f.target, where_);
    engine::PauseStorm st;
    st.port = routing::dir_link(l, end, t) ^ 1;  // the direction entering the named end
    st.start = f.at;
    st.end = Time(f.at.ps + f.duration.ps);
    st.what = fmt::format("pfc_storm link {}", f.target);
    out.push_back(std::move(st));
  }
  return out;
}

std::vector<engine::ThresholdDrift> Scenario::threshold_drifts(const topology::Topology& t) const {
  std::vector<engine::ThresholdDrift> out;
  for (size_t i = 0; i < faults.size(); ++i) {
    const FaultSpec& f = faults[i];
    if (f.kind != "drifted_thresholds") continue;
    const std::string where_ = from_set.count("faults")
                                   ? fmt::format("--set faults[{}]", i)
                                   : fmt::format("{}:{}: faults[{}]", file_of("faults"), f.line, i);
    engine::ThresholdDrift d;
    d.node = find_switch(t, f.target, where_);
    d.kmin = f.kmin;
    d.kmax = f.kmax;
    d.pmax = f.pmax;
    d.dt_shift = f.dt_shift;
    d.what = fmt::format("{}: drifted_thresholds switch {}", where_, f.target);
    out.push_back(std::move(d));
  }
  return out;
}

std::string Scenario::blame(const ParamError& e) const {
  // The key the user changed: a --set first, then a --config-add fragment, then the file; else the error's own key.
  const auto* shared = dynamic_cast<const SharedParamError*>(&e);
  if (!shared) return e.key();
  for (const std::string& k : shared->also())
    if (from_set.count(k) > 0) return k;
  for (const std::string& k : shared->also())
    if (from_fragment.count(k) > 0) return k;
  // Else the error's key where the file gives it; or the first the file gives, rather than a default it never wrote.
  if (auto it = lines.find(e.key()); it != lines.end() && it->second > 0) return e.key();
  for (const std::string& k : shared->also())
    if (auto it = lines.find(k); it != lines.end() && it->second > 0) return k;
  return e.key();
}

const std::string& Scenario::file_of(const std::string& key) const {
  const auto f = from_fragment.find(key);
  return f != from_fragment.end() ? f->second.first : source;
}

bool Scenario::given(const std::string& key) const {
  if (sections_from_set.count(key) || from_fragment.count(key)) return true;
  for (size_t dot = key.size(); dot != std::string::npos; dot = dot == 0 ? std::string::npos : key.rfind('.', dot - 1))
    if (from_set.count(key.substr(0, dot))) return true;
  const auto it = lines.find(key);
  return it != lines.end() && it->second > 0;
}

std::string Scenario::where(const std::string& key) const {
  // A key under a map given whole with --set (`--set 'topology={family: ..., gpus: ...}'`) is the --set's too.
  if (auto f = from_set.find(key); f != from_set.end() && !f->second.empty()) return f->second;
  if (sections_from_set.count(key)) return "--set " + key;
  for (size_t dot = key.size(); dot != std::string::npos; dot = dot == 0 ? std::string::npos : key.rfind('.', dot - 1))
    if (auto f = from_set.find(key.substr(0, dot)); f != from_set.end())
      return f->second.empty() ? "--set " + key : f->second + key.substr(dot);  // a flag's label (--vary KEY)
  if (auto f = from_fragment.find(key); f != from_fragment.end())
    return fmt::format("{}:{}: {}", f->second.first, f->second.second, key);
  auto it = lines.find(key);
  if (it != lines.end() && it->second > 0) return fmt::format("{}:{}: {}", source, it->second, key);
  if (auto r = recipe_keys.find(key); r != recipe_keys.end())
    return fmt::format("{}: {} (from the {} recipe)", source, key, r->second);
  return fmt::format("{}: {} (default)", source, key);
}

std::string Scenario::where(const ParamError& e) const {
  std::string own = where(e.key());
  if (own.rfind("--", 0) == 0) return own;
  const std::string what = e.what();
  const auto part_of_name = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; };
  for (const auto& [key, flag] : from_set) {
    if (key == e.key()) continue;
    for (size_t at = what.find(key); at != std::string::npos; at = what.find(key, at + 1))
      if ((at == 0 || !part_of_name(what[at - 1])) &&
          (at + key.size() == what.size() || !part_of_name(what[at + key.size()])))
        return where(key);
  }
  return own;
}

namespace {
std::string yaml_value(const std::string& text) {
  if (text.empty()) return "\"\"";
  if (text.front() == '[') return text;
  bool quote = text.find_first_of(":#{}&*!|>'\"%@`,") != std::string::npos || text.front() == '-' ||
               text.front() == ' ' || text.back() == ' ';
  if (!quote) return text;
  std::string s = "\"";
  for (char c : text) s += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  return s + "\"";
}
// Each key with its value; a key left to work out at run time (optional, not given) as a comment saying how. A
// key a model's recipe set (`recipe`: key -> model) is a comment too: the file's model sets it again when the
// file is run, and a model edited in takes its own recipe (written as a value, gpt3-175b's layout and token
// budget stayed with an edited-in llama3-70b).
// A key that `recipe` maps to "" is a default a recipe could set: a comment, so that a model's recipe still
// applies when the file is read again (a key written out counts as given and keeps the recipe away).
void emit_params(std::ostringstream& out, const std::vector<ParamSpec>& specs, const Params& p,
                 const std::map<std::string, std::string>& recipe = {}) {
  for (const auto& s : specs) {
    if (const auto r = recipe.find(s.name); r != recipe.end() && p.has(s.name))
      out << "  # " << s.name << ": " << yaml_value(p.text(s.name))
          << (r->second.empty() ? std::string(" (default)") : " (" + r->second + "'s recipe: workload.model sets it)")
          << "\n";
    else if (p.has(s.name)) out << "  " << s.name << ": " << yaml_value(p.text(s.name)) << "\n";
    else if (s.optional)  // its help up to the first "; " (the rest is on `podnet list keys`)
      out << "  # " << s.name << ": auto (" << first_clause(s.help) << ")\n";
  }
}
}  // namespace

std::vector<std::string> Scenario::recipe_keys_from_file() const {
  std::vector<std::string> out;
  if (!from_set.count("workload.model")) return out;
  // Only the keys the new model's recipe gives: another (llama3-70b's recipe gives no global batch) comes from
  // the file whatever workload.recipe says.
  const auto section = section_params.find("workload");
  const workload::Recipe* r =
      section == section_params.end() ? nullptr : workload::find_recipe(section->second.get_string("model"));
  std::set<std::string> given_by_recipe;
  if (r)
    for (const auto& g : r->groups)
      for (const auto& kv : g.keys) given_by_recipe.insert(kv.first);
  for (const auto& [group, keys] : workload::recipe_groups())
    for (const auto& k : keys) {
      const std::string path = "workload." + k;
      if ((!r || given_by_recipe.count(k)) && !recipe_keys.count(path) && !from_set.count(path) &&
          (lines.count(path) || from_fragment.count(path)))
        out.push_back(k);
    }
  return out;
}

std::string Scenario::resolved_yaml(bool editable) const {
  std::ostringstream out;
  out << "# resolved scenario (every default filled in), podnet " << version() << "\n";
  out << "schema_version: 1\n";
  out << "name: " << yaml_value(name) << "\n";
  if (!description.empty()) out << "description: " << yaml_value(description) << "\n";
  out << "seed: " << seed << "\n";
  out << "topology:\n  family: " << family << "\n";
  emit_params(out, topology::find_builder(family)->params(), topology);
  for (const auto& s : sections()) {
    out << s.name << ":\n";
    std::map<std::string, std::string> recipe;  // key -> the model whose recipe set it ("": a default beside them)
    if (editable && std::string(s.name) == "workload") {  // recipes set workload keys only
      const std::string prefix = "workload.";
      for (const auto& [path, model] : recipe_keys)
        if (path.rfind(prefix, 0) == 0) recipe[path.substr(prefix.size())] = model;
      // Every other key a recipe could set, where the user gave it nowhere: a default, commented too (written
      // out, podnet's default tp: 8 kept an edited-in model's recipe away).
      for (const auto& [group, keys] : workload::recipe_groups())
        for (const std::string& k : keys)
          if (!recipe.count(k) && !given(prefix + k)) recipe[k] = "";
    }
    emit_params(out, s.params(), section(s.name), recipe);
  }
  if (!failures.empty()) {
    out << "failures:\n";
    for (const auto& f : failures) {
      if (f.target_kind == "random") {
        out << "  - {random: " << f.target;
        if (f.count < 0) out << ", scale: " << format_number(f.scale);
        if (!f.parts.empty()) out << ", parts: [" << join(f.parts) << "]";
        if (f.from.ps > 0) out << ", from: " << format_time(f.from);
        if (f.until.ps > 0) out << ", until: " << format_time(f.until);
        out << "}\n";
        continue;
      }
      if (f.target_kind == "links" || f.target_kind == "switches") {
        out << "  - {" << f.target_kind << ": " << yaml_value(f.target) << ", "
            << (f.count >= 0 ? "count: " + std::to_string(f.count)
                             : "fraction: " + format_number(100 * f.fraction) + "%")
            << ", at: " << format_time(f.at) << ", action: " << f.action;
        if (f.action == "degrade") out << ", rate: " << format_bandwidth(f.rate);
        out << "}\n";
        continue;
      }
      out << "  - {at: " << format_time(f.at) << ", " << f.target_kind << ": " << yaml_value(f.target)
          << ", action: " << f.action;
      if (f.action == "degrade") out << ", rate: " << format_bandwidth(f.rate);
      if (f.action == "slow") out << ", factor: " << format_number(f.factor);
      out << "}\n";
    }
  }
  if (!jobs.empty()) {
    out << "jobs:\n";
    for (const auto& j : jobs) {
      out << "  - {name: " << yaml_value(j.name) << ", gpus: " << j.gpus
          << ", start: " << (j.start.ps == 0 ? std::string("0s") : format_time(j.start));
      if (!j.placement.empty()) out << ", placement: " << j.placement;
      if (!j.keys.empty()) {
        out << ", workload: {";
        std::set<std::string> seen;
        bool first = true;
        for (const auto& k : j.keys) {
          if (!seen.insert(k).second) continue;
          out << (first ? "" : ", ") << k << ": " << yaml_value(j.workload.text(k));
          first = false;
        }
        out << "}";
      }
      out << "}\n";
    }
  }
  if (!faults.empty()) {
    out << "faults:\n";
    for (const auto& f : faults) {
      out << "  - {kind: " << f.kind << ", " << f.target_kind << ": " << yaml_value(f.target);
      if (f.target_kind == "link" && f.kind != "pfc_storm") out << ", direction: " << f.direction;
      if (f.kind == "drop" || f.kind == "corrupt") out << ", probability: " << format_number(f.probability, 12);
      if (f.kind == "degrade") out << ", latency: " << format_time(f.latency);
      if (f.kind == "flap") out << ", period: " << format_time(f.period) << ", down: " << format_time(f.down);
      if (f.kind == "pfc_storm") out << ", duration: " << format_time(f.duration);
      if (f.kmin >= 0) out << ", kmin: " << f.kmin << "B";
      if (f.kmax >= 0) out << ", kmax: " << f.kmax << "B";
      if (f.pmax >= 0) out << ", pmax: " << format_number(f.pmax, 12);
      if (f.dt_shift >= 0) out << ", pfc_alpha: " << format_number(std::ldexp(1.0, -f.dt_shift), 12);
      if (f.at.ps > 0) out << ", at: " << format_time(f.at);
      out << "}\n";
    }
  }
  return out.str();
}

Scenario load_text(const std::string& text, const std::string& source, const std::string& default_name,
                   const std::vector<std::string>& overrides, const std::vector<std::string>& fragments,
                   const std::map<std::string, std::string>& flags) {
  Scenario sc;
  sc.source = source;
  sc.name = default_name;
  YAML::Node root = parse_yaml(text, source);
  if (!root || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  if (!root.IsMap())
    throw InputError(fmt::format("{}:{}: expected a YAML map with schema_version and topology, got a {}", source,
                                 std::max(1, root.Mark().line + 1), root.IsSequence() ? "list" : "single value"));
  check_duplicate_keys(root, "", source);
  for (const auto& f : fragments) apply_fragment(root, f, sc);
  for (const auto& o : overrides) apply_override(root, o, sc, flags);
  sc.overrides = overrides;
  sc.fragments = fragments;
  Loader(sc, source).load(root);
  return sc;
}

Scenario load(const std::string& path_or_name, const std::vector<std::string>& overrides,
              const std::vector<std::string>& fragments, const std::map<std::string, std::string>& flags) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_regular_file(path_or_name, ec)) {
    std::ifstream in(path_or_name, std::ios::binary);
    if (!in) throw InputError(fmt::format("{}: cannot read the file", path_or_name));
    std::stringstream buf;
    buf << in.rdbuf();
    return load_text(buf.str(), path_or_name, fs::path(path_or_name).stem().string(), overrides, fragments, flags);
  }
  for (const auto& ex : builtin_examples())
    if (path_or_name == ex.name)
      return load_text(ex.text, std::string(ex.name) + ".yaml (built-in)", ex.name, overrides, fragments, flags);
  if (fs::is_directory(path_or_name, ec))
    throw InputError(
        fmt::format("{}: a directory; expected a scenario YAML file or a built-in scenario's name", path_or_name));
  std::vector<std::string> names;
  for (const auto& ex : builtin_examples()) names.push_back(ex.name);
  std::string hint = closest(path_or_name, names);
  throw InputError(fmt::format("{}: no such file, and no built-in scenario of that name{}; built-in scenarios: {}",
                               path_or_name, hint.empty() ? "" : " (did you mean '" + hint + "'?)", join(names)));
}

}  // namespace podnet::scenario
