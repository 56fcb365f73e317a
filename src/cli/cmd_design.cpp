#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fnmatch.h>
#include <map>
#include <optional>
#include <string_view>
#include <thread>

#include "cli/common.hpp"
#include "collective/nccl/tuner.hpp"
#include "core/error.hpp"
#include "core/ip.hpp"
#include "report/config_plan.hpp"
#include "report/design_report.hpp"
#include "report/export.hpp"
#include "report/html.hpp"
#include "report/studies.hpp"
#include "report/web_assets.hpp"
#include "report/yaml_json.hpp"
#include "topology/bom.hpp"
#include "workload/job.hpp"

namespace podnet::cli {

namespace {

struct DesignOptions {
  std::string cost_csv;
  std::string cabling_plan;
  std::string netbox_dir;
  std::string config_plan_dir;
  std::vector<std::string> config_switches;  // --config-switches: shell patterns on switch names
  std::string html;
  std::vector<std::string> exports;
};

// --config-plan DIR: frr/<switch>.conf, sonic/<switch>.json, switches.csv, ip-addresses.csv (report/config_plan.hpp).
// Optical cables typed as the bill of materials prices them (AOC, multimode SR, single-mode DR/FR).
report::CableTyping cable_typing(const scenario::Scenario& sc) {
  const topology::CostModel m = sc.cost_model();
  return {m.aoc_max_m, m.sr_max_m};
}

}  // namespace

// The switches --config-switches picks (every one without patterns), in the plan's order; a pattern list that
// picks none is refused, with names to copy.
std::vector<size_t> pick_switches(const topology::Topology& t, const topology::AddressPlan& plan,
                                  const std::vector<std::string>& only) {
  std::vector<size_t> chosen;
  for (size_t s = 0; s < plan.switches.size(); ++s) {
    const std::string& name = t.nodes[plan.switches[s].node].name;
    if (only.empty() || std::any_of(only.begin(), only.end(),
                                    [&](const std::string& g) { return fnmatch(g.c_str(), name.c_str(), 0) == 0; }))
      chosen.push_back(s);
  }
  if (chosen.empty() && !plan.switches.empty()) {
    std::string some;
    for (size_t s = 0; s < std::min<size_t>(3, plan.switches.size()); ++s)
      some += (s ? ", " : "") + t.nodes[plan.switches[s].node].name;
    throw InputError(fmt::format("--config-switches {}: matches none of the {} switches; expected shell patterns on "
                                 "their names, e.g. {}",
                                 fmt::join(only, ","), thousands(static_cast<int64_t>(plan.switches.size())), some));
  }
  return chosen;
}

void write_config_plan(const topology::Topology& t, const topology::AddressPlan& plan, const std::string& dir,
                       const std::vector<topology::Tenant>& tenants, const topology::Tenant* storage, size_t workers,
                       const std::vector<std::string>& only) {
  namespace fs = std::filesystem;
  std::error_code ec;
  // Each switch's two files are independent of every other's (pure functions of the plan): they are written
  // on every core, in chunks taken in order, and come out the same whatever the thread count. The first
  // error (in switch order) is the one reported. A line every 5 s on a long plan (a 1,048,576-GPU fabric's
  // 20,480 switches take about 20 s of CPU).
  const std::vector<size_t> chosen = pick_switches(t, plan, only);  // the switches whose files are written
  for (const char* sub : {"frr", "sonic"}) {
    fs::create_directories(fs::path(dir) / sub, ec);
    if (ec) throw InputError("--config-plan " + dir + ": cannot create the directory: " + ec.message());
  }
  const size_t n = chosen.size();
  if (workers == 0) workers = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 16);
  constexpr size_t kChunk = 16;
  std::atomic<size_t> next{0}, done{0};
  std::vector<std::exception_ptr> errors((n + kChunk - 1) / kChunk);
  const auto work = [&] {
    for (size_t c = next.fetch_add(1); c * kChunk < n; c = next.fetch_add(1)) {
      try {
        for (size_t i = c * kChunk; i < std::min(n, (c + 1) * kChunk); ++i) {
          const size_t s = chosen[i];
          const std::string& name = t.nodes[plan.switches[s].node].name;
          write_out("--config-plan", (fs::path(dir) / "frr" / (name + ".conf")).string(),
                    report::frr_config(t, plan, s, tenants, storage));
          write_out("--config-plan", (fs::path(dir) / "sonic" / (name + ".json")).string(),
                    report::sonic_config_db(t, plan, s, tenants, storage));
        }
      } catch (...) {
        errors[c] = std::current_exception();
      }
      done.fetch_add(std::min(n, (c + 1) * kChunk) - c * kChunk);
    }
  };
  const auto start = std::chrono::steady_clock::now();
  {
    std::vector<std::thread> pool;
    for (size_t w = 1; w < std::min(workers, errors.size()); ++w) pool.emplace_back(work);
    std::thread progress;
    std::atomic<bool> finished{false};
    if (n > 0)
      progress = std::thread([&] {
        auto last = start;
        while (!finished.load()) {
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
          const auto now = std::chrono::steady_clock::now();
          if (now - last < std::chrono::seconds(5) || finished.load()) continue;
          last = now;
          const size_t d = done.load();
          std::cerr << fmt::format("podnet design: config plan: {} of {} switches written ({})\n", thousands(d),
                                   thousands(n),
                                   report::elapsed_and_eta(static_cast<int64_t>(d), static_cast<int64_t>(n),
                                                           std::chrono::duration<double>(now - start).count()));
        }
      });
    work();
    for (auto& th : pool) th.join();
    finished = true;
    if (progress.joinable()) progress.join();
  }
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  std::string table = "switch,network,tier,asn,loopback,router_id,bgp_sessions,maximum_paths\n";
  for (size_t s = 0; s < plan.switches.size(); ++s) {
    const auto& sw = plan.switches[s];
    const std::string& name = t.nodes[sw.node].name;
    table += fmt::format("{},{},{},{},{},{},{},{}\n", name, t.nodes[sw.node].network != 0 ? "frontend" : "backend",
                         t.nodes[sw.node].tier, sw.asn, format_ip(sw.loopback, plan.options.v6),
                         format_ipv4(sw.router_id), sw.sessions, std::clamp(sw.sessions, 1, topology::kMaxEcmpPaths));
  }
  write_out("--config-plan", (fs::path(dir) / "switches.csv").string(), table);
  {  // written as it is made: 660 MB at 1,048,576 GPUs
    const std::string path = (fs::path(dir) / "ip-addresses.csv").string();
    std::ofstream f = open_out(path);
    report::netbox_ip_addresses_csv(t, plan, workers,
                                    [&](std::string_view piece) { f.write(piece.data(), std::ssize(piece)); });
    close_out(f, "--config-plan", path);
  }
  int64_t numbered = 0;
  for (const auto& l : plan.links) numbered += l.numbered ? 1 : 0;
  if (plan.switches.empty()) {
    std::cerr << "podnet: wrote the configuration plan into " << dir
              << ": the fabric has no switches (chip-to-chip links are not IP links): no device to configure\n";
    return;
  }
  // With --config-switches: how many of each tier the patterns chose, so that a pattern that missed a tier shows
  // (a pod's leaves are named after their groups, su000-leaf-r0, not the pod).
  std::string chosen_by_tier;
  if (!only.empty()) {
    std::map<std::pair<bool, int>, std::pair<int64_t, int64_t>> tiers;  // (frontend, tier) -> (chosen, all)
    std::vector<char> picked(plan.switches.size(), 0);
    for (size_t s : chosen) picked[s] = 1;
    for (size_t s = 0; s < plan.switches.size(); ++s) {
      const auto& node = t.nodes[plan.switches[s].node];
      auto& c = tiers[{node.network != 0, node.tier}];
      c.first += picked[s];
      ++c.second;
    }
    std::vector<std::string> parts;
    for (const auto& [k, c] : tiers) {
      const auto& names = k.first ? t.frontend_tier_names : t.tier_names;
      const std::string name = static_cast<size_t>(k.second) < names.size() && !names[k.second].empty()
                                   ? names[k.second]
                                   : fmt::format("tier {}", k.second);
      parts.push_back(
          fmt::format("{}{} {} of {}", k.first ? "frontend " : "", name, thousands(c.first), thousands(c.second)));
    }
    chosen_by_tier = fmt::format(" ({})", fmt::join(parts, ", "));
  }
  std::cerr << fmt::format(
      "podnet: wrote the configuration plan into {}: {} switches{} (frr/*.conf, sonic/*.json, switches.csv), {} ASNs, "
      "{} eBGP sessions ({}), {} /{} subnets and {} loopbacks (ip-addresses.csv, NetBox's IP import)\n",
      dir,
      only.empty() ? thousands(static_cast<int64_t>(plan.switches.size()))
                   : fmt::format("the files of {} of the {}", thousands(static_cast<int64_t>(n)),
                                 thousands(static_cast<int64_t>(plan.switches.size()))),
      chosen_by_tier, thousands(plan.asns), thousands(plan.sessions),
      plan.options.unnumbered ? "unnumbered" : "numbered", thousands(numbered), plan.options.v6 ? 127 : 31,
      thousands(static_cast<int64_t>(plan.switches.size())));
  if (!tenants.empty())
    std::cerr << fmt::format("podnet: {} tenants in VRFs of their own over EVPN-VXLAN: BGP EVPN in frr/*.conf, "
                             "VRFs, VTEPs and VNI maps in sonic/*.json\n",
                             tenants.size());
}

namespace {

int cmd_design(const Common& c, const DesignOptions& d) {
  if (!d.html.empty() && !report::dashboard_installed())
    throw InputError(std::string("--html: ") + report::kDashboardMissing);
  check_output_dir("--out", c.out_dir);
  check_output_file("--html", d.html);
  check_output_file("--cost-csv", d.cost_csv);
  check_output_file("--cabling-plan", d.cabling_plan);
  check_output_dir("--netbox", d.netbox_dir);
  check_output_dir("--config-plan", d.config_plan_dir);
  if (!d.config_switches.empty() && d.config_plan_dir.empty())
    throw InputError("--config-switches: it picks the switches of --config-plan DIR; expected --config-plan too");
  // Without --out an export goes to stdout in place of the report: one document there, or no consumer reads it
  // (two exports, or an export and --format, made one stream of DOT followed by JSON).
  if (c.out_dir.empty() && d.exports.size() > 1)
    throw InputError(fmt::format("--export {}: several exports need --out DIR (one file each); stdout takes one",
                                 fmt::join(d.exports, " --export ")));
  if (c.out_dir.empty() && !d.exports.empty() && c.format != "table")
    throw InputError(fmt::format("--export {} and --format {}: without --out the export is what goes to stdout, not "
                                 "the report; give --out DIR to have both",
                                 d.exports.front(), c.format));
  scenario::Scenario sc = load_scenario(c);
  const bool infiniband = engine::transport_preset(sc.section("network").get_string("transport")).nic_links ==
                          engine::LinkClass::InfiniBand;
  const topology::FrontendConfig fc = sc.frontend();
  // InfiniBand: a subnet manager configures the back end; the plan covers the Ethernet frontend alone, if any.
  if (!d.config_plan_dir.empty() && infiniband && !fc.present())
    throw InputError(fmt::format(
        "--config-plan {}: the plan is eBGP over Ethernet (FRR, SONiC, /31 links); network.transport is "
        "infiniband, whose fabric a subnet manager configures (no routing protocol, no switch IP addresses): "
        "nothing to write without an Ethernet frontend (frontend.nics; the NetBox set, --netbox, has the "
        "InfiniBand fabric's devices and cables)",
        d.config_plan_dir));
  // Tenants isolated on the frontend (frontend.tenants: isolated) need tenants and an Ethernet frontend.
  const bool isolate = sc.section("frontend").get_string("tenants") == "isolated";
  if (isolate && (!fc.present() || infiniband))
    throw InputError(sc.where("frontend.tenants") +
                     ": isolated tenants on the frontend need an Ethernet frontend; expected frontend.nics above 0 "
                     "(and an Ethernet back end), or frontend.tenants: shared");
  if (isolate && sc.tenants.empty())
    throw InputError(sc.where("frontend.tenants") +
                     ": there are no tenants to isolate; expected a tenants: section, or frontend.tenants: shared");
  topology::Topology t = sc.build_topology();
  sc.check_failures(t);  // design injects no failures, but a misspelt one is refused here as everywhere
  nlohmann::json doc = design_document(sc, t, "design");
  // The site (back end and frontend as one topology) for the exports that describe the whole site: the cabling
  // plan, the NetBox set and the configuration plan.
  std::optional<topology::FrontendFabric> frontend;
  if (fc.present() &&
      (!d.exports.empty() || !d.cabling_plan.empty() || !d.netbox_dir.empty() || !d.config_plan_dir.empty()))
    frontend = sc.build_frontend(t.servers);
  std::optional<topology::Topology> site_storage;
  if (frontend && (!d.cabling_plan.empty() || !d.netbox_dir.empty() || !d.config_plan_dir.empty()))
    site_storage = topology::site_topology(t, *frontend);
  const topology::Topology& site = site_storage ? *site_storage : t;
  // The address plan before anything is printed or written: a pool too small for the fabric is refused with
  // nothing on stdout (a script redirecting it kept the whole report of a failed run).
  std::optional<topology::AddressPlan> plan;
  // The topology the IP plan covers: the site, or with an InfiniBand back end its Ethernet frontend alone.
  const topology::Topology& ip_fabric = infiniband && frontend ? frontend->topology : site;
  if ((!d.netbox_dir.empty() && !infiniband) || !d.config_plan_dir.empty()) {  // InfiniBand: no IP plan
    try {
      plan = topology::plan_addresses(ip_fabric, topology::addressing_from(sc.section("addressing")));
    } catch (const ParamError& e) {
      throw InputError(fmt::format("{}: {}", sc.where(e.key()), e.what()));
    }
    // Patterns that pick no switch are refused before the report prints (they were after the whole design).
    if (!d.config_plan_dir.empty()) (void)pick_switches(ip_fabric, *plan, d.config_switches);
  }
  const bool exports_to_stdout = !d.exports.empty() && c.out_dir.empty();
  if (!exports_to_stdout) emit(c, sc, doc, "design", report::write_design_table);
  if (!d.html.empty()) {
    const std::string page =
        report::html_page({{"kind", "design"}, {"document", doc}, {"drawing", report::fabric_drawing(t)}},
                          "podnet design " + sc.name);
    write_out("--html", d.html, page);
    std::cerr << "podnet: wrote " << d.html << "\n";
  }
  if (!d.cost_csv.empty()) {
    auto f = open_out(d.cost_csv);
    // The frontend's priced parts follow the back end's, their group prefixed "frontend " ("frontend leaf").
    nlohmann::json cost = doc["cost"];
    if (doc.contains("frontend"))
      for (nlohmann::json item : doc["frontend"]["cost"]["items"]) {
        item["group"] = "frontend " + item["group"].get<std::string>();
        item["label"] = "frontend " + item["label"].get<std::string>();
        cost["items"].push_back(std::move(item));
      }
    // The bill's total and a year's energy close it, each as count x unit = total (kWh x $/kWh), so a
    // spreadsheet sums to design's figures without the JSON.
    cost["items"].push_back(
        {{"group", "total"},
         {"label", "network capex, total"},
         {"part", "total"},
         {"total_usd", doc.contains("capex_with_frontend_usd") ? doc["capex_with_frontend_usd"] : cost["capex_usd"]}});
    if (cost.contains("energy_mwh_per_year") && cost.contains("energy_price_usd_per_kwh"))
      cost["items"].push_back(
          {{"group", "energy"},
           {"label", fmt::format("energy per year, kWh (whole cluster, PUE {:g})", cost["pue"].get<double>())},
           {"part", "energy_kwh_per_year"},
           {"count", report::round_to(cost["energy_mwh_per_year"].get<double>() * 1000, 3)},
           {"unit_usd", cost["energy_price_usd_per_kwh"]},
           {"total_usd", cost["energy_usd_per_year"]}});
    // What count counts: parts, metres of fibre, kWh of energy (a column of its own: count held all three).
    for (auto& item : cost["items"]) {
      const std::string part = item.value("part", std::string());
      if (item.contains("count"))
        item["count_unit"] = part == "fibre_m" ? "m" : part == "energy_kwh_per_year" ? "kWh" : "each";
    }
    report::write_tidy_csv(cost, "items", "group", f,
                           {"label", "part", "speed_gbps", "count", "count_unit", "unit_usd", "total_usd"});
    close_out(f, "--cost-csv", d.cost_csv);
    std::cerr << "podnet: wrote the priced bill " << d.cost_csv << "\n";
  }
  if (!d.cabling_plan.empty()) {
    auto f = open_out(d.cabling_plan);
    report::write_cabling_plan_csv(site, f, cable_typing(sc));
    close_out(f, "--cabling-plan", d.cabling_plan);
    std::cerr << "podnet: wrote cabling plan " << d.cabling_plan << "\n";
  }
  if (!d.netbox_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(d.netbox_dir, ec);
    if (ec) throw InputError("--netbox " + d.netbox_dir + ": cannot create the directory: " + ec.message());
    for (const auto& file :
         report::netbox_import_set(site, sc.hardware(), sc.name.empty() ? "podnet" : sc.name, plan ? &*plan : nullptr,
                                   infiniband, cable_typing(sc), frontend ? &*frontend : nullptr,
                                   fc.first_storage_slot(t.servers))) {
      write_out("--netbox", (std::filesystem::path(d.netbox_dir) / file.name).string(), file.text);
    }
    std::cerr << "podnet: wrote the NetBox import set into " << d.netbox_dir
              << " (import the files in name order: 00-custom-fields.csv ... "
              << (infiniband ? "08-cables.csv; InfiniBand: no IP addresses" : "09-ip-addresses.csv") << ")\n";
  }
  if (!d.config_plan_dir.empty()) {
    // Tenants sit on the back end's leaves: with InfiniBand, its partitions (PKeys) isolate them, not this plan.
    const std::vector<topology::Tenant> tenants = infiniband ? std::vector<topology::Tenant>{} : sc.plan_tenants(t);
    if (infiniband)
      std::cerr << "podnet: the InfiniBand back end is left to its subnet manager: the configuration plan covers the "
                   "Ethernet frontend alone"
                << (sc.tenants.empty() ? "" : " (tenants: InfiniBand partitions isolate them, not in this plan)")
                << "\n";
    if (!tenants.empty() && plan->options.v6)
      throw InputError(fmt::format(
          "{}: the plan writes tenants with IPv4 VTEPs only (each leaf's Loopback0); expected addressing.family "
          "ipv4 with tenants",
          sc.where("addressing.family")));
    // Tenants isolated on the frontend (frontend.tenants: isolated): the storage nodes in a VRF of their own
    // that every tenant's imports (config_plan.hpp).
    std::optional<topology::Tenant> storage_vrf;
    if (isolate) storage_vrf = topology::storage_tenant(sc.section("addressing").get_int("asn_base"));
    write_config_plan(ip_fabric, *plan, d.config_plan_dir, tenants, storage_vrf ? &*storage_vrf : nullptr, 0,
                      d.config_switches);
  }
  // The frontend network (frontend:), when there is one, goes beside the back end as frontend.<format>.
  for (const auto& fmt_name : d.exports) {
    auto render = [&](const topology::Topology& topo) {
      std::ostringstream buf;
      if (fmt_name == "dot") report::write_dot(topo, buf);
      else if (fmt_name == "graphml") report::write_graphml(topo, buf);
      else report::write_topology_json(topo, buf);
      return buf.str();
    };
    if (exports_to_stdout) {
      std::cout << render(t);
      if (frontend)
        std::cerr << "podnet: the frontend network goes to its own file (frontend." << fmt_name
                  << "): give --out DIR to have it\n";
      continue;
    }
    for (const auto& [stem, topo] : {std::pair<const char*, const topology::Topology*>{"topology", &t},
                                     {"frontend", frontend ? &frontend->topology : nullptr}}) {
      if (topo == nullptr) continue;
      const std::string path = (std::filesystem::path(c.out_dir) / (std::string(stem) + "." + fmt_name)).string();
      write_out("--out", path, render(*topo));
      std::cerr << "podnet: wrote " << path << "\n";
    }
  }
  return kExitOk;
}

// key.path,value rows of the resolved scenario (lists as their JSON text).
void resolved_csv(const nlohmann::json& j, const std::string& prefix, std::ostream& out) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string key = prefix.empty() ? it.key() : prefix + "." + it.key();
    if (it->is_object()) {
      resolved_csv(*it, key, out);
      continue;
    }
    std::string v = it->is_string() ? it->get<std::string>() : it->dump();
    if (v.find_first_of(",\"\n") != std::string::npos) {
      std::string q = "\"";
      for (char ch : v) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
      v = q + "\"";
    }
    out << key << "," << v << "\n";
  }
}

// What each `auto` of the scenario becomes on its fabric, as YAML comments
// (the scenario itself keeps `auto`, so it resolves the same way again).
std::string auto_notes(const scenario::Scenario& sc, const std::optional<scenario::Setup>& setup) {
  std::vector<std::string> lines;
  const auto is_auto = [&](const std::string& section, const std::string& key) {
    const Params& p = sc.section(section);
    return p.has(key) && p.text(key) == "auto";
  };
  if (is_auto("network", "cc")) {
    const auto& n = setup->network;
    lines.push_back(fmt::format("network.cc: {} (network.transport {}; the packet engine's congestion control)",
                                n.transport.default_cc, n.transport.name));
  }
  if (is_auto("collective", "channels")) {
    std::vector<int32_t> all(setup->fabric.gpus.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int32_t>(i);
    const auto shape = collective::comm_shape(all, setup->fabric, setup->collective.arch);
    lines.push_back(fmt::format("collective.channels: NCCL's execution channels, per communicator: {} over all {} "
                                "GPUs ({}, {} each); podnet bench prints each run's channels",
                                collective::execution_channels(shape), thousands(static_cast<int64_t>(all.size())),
                                plural(shape.nodes, "server", "servers"), plural(shape.nics, "NIC", "NICs")));
  }
  for (const char* k : {"algorithms", "protocols"})
    if (is_auto("collective", k))
      lines.push_back(fmt::format("collective.{}: chosen per collective and size by NCCL's cost model (podnet bench "
                                  "prints the choice per row)",
                                  k));
  // The job, once: its stages, and the keys its model and GPU presets fill. A fabric whose job cannot be set up
  // (a design-only scenario) says why at stage_layers and resolves nothing else of the workload.
  std::optional<workload::Job> job;
  std::string no_job;
  try {
    job = setup->job(false);
  } catch (const Error& e) {
    no_job = e.what();
  }
  if (is_auto("workload", "stage_layers")) {
    if (job) {
      std::string list;
      for (int64_t st = 0; st < job->pp; ++st) list += (st ? ", " : "") + std::to_string(job->stage_layers(st));
      lines.push_back(fmt::format("workload.stage_layers: [{}] (layers per pipeline stage, balanced with the "
                                  "embedding and LM head)",
                                  list));
    } else {
      lines.push_back(fmt::format("workload.stage_layers: not resolved ({})", no_job));
    }
  }
  // The keys left out whose value comes from the model and GPU presets (the commented `# key: auto` lines above).
  const auto unset = [&](const std::string& section, const std::string& key) { return !sc.section(section).has(key); };
  if (job) {
    std::vector<std::string> shape;
    const std::pair<const char*, int64_t> dims[] = {{"layers", job->model.layers}, {"hidden", job->model.hidden},
                                                    {"heads", job->model.heads},   {"kv_heads", job->model.kv_heads},
                                                    {"ffn", job->model.ffn},       {"vocab", job->model.vocab},
                                                    {"seq", job->model.seq}};
    for (const auto& [k, v] : dims)
      if (unset("workload", k)) shape.push_back(fmt::format("{} {}", k, thousands(v)));
    if (!shape.empty())
      lines.push_back(fmt::format("workload model shape ({}): {}", job->model.name, fmt::join(shape, ", ")));
    std::vector<std::string> speed;
    if (unset("workload", "compute_efficiency"))
      speed.push_back(fmt::format("compute_efficiency {:.3f}", job->compute_efficiency));
    if (unset("workload", "attention_efficiency") && job->attention_efficiency > 0)
      speed.push_back(fmt::format("attention_efficiency {:.3f}", job->attention_efficiency));
    if (unset("workload", "sustained_fraction"))
      speed.push_back(fmt::format("sustained_fraction {:.3f}", job->sustained_fraction));
    if (unset("workload", "layer_overhead"))
      speed.push_back(fmt::format("layer_overhead {}", format_time(Time::from_seconds(job->layer_overhead))));
    if (!speed.empty())
      lines.push_back(fmt::format("workload compute ({} preset): {}", job->gpu.name, fmt::join(speed, ", ")));
  }
  if (unset("server", "nvlink_domain") && !setup->fabric.gpus.empty())
    lines.push_back(fmt::format("server.nvlink_domain: {} GPUs (one server's)", setup->fabric.gpus_per_server));
  lines.push_back("network.switch_buffer, ecn_*, rto, mtu, stack_latency: set per port and transport when a run "
                  "starts, by the rule in each key's help above (`podnet list keys`)");
  std::string out = "# what `auto` resolves to on this fabric (comments; the scenario keeps auto):\n";
  for (const auto& l : lines) out += "#   " + l + "\n";
  return out;
}

int cmd_resolve(const Common& c) {
  scenario::Scenario sc = load_scenario(c);
  const std::string yaml = sc.resolved_yaml(true);
  // A scenario that cannot be set up (its keys parse, but together they make no fabric or job: 60 GPUs of
  // 8-GPU servers) is refused, exit 2, as every other command refuses it; the table form still prints the
  // scenario first, with the reason, to help mend it.
  std::optional<scenario::Setup> setup;
  std::string broken;
  const RunLabel label;  // outlives the Setup's printers
  try {
    setup = load_setup(c, "resolve", label);
  } catch (const InputError& e) {
    broken = e.what();
  }
  if (c.format == "table" || c.format == "yaml") {
    std::cout << yaml << (broken.empty() ? auto_notes(sc, setup) : "# (not a scenario podnet can run: see below)\n");
    if (!broken.empty()) throw InputError(broken);
    return kExitOk;
  }
  if (!broken.empty()) throw InputError(broken);
  nlohmann::json j = report::yaml_json(YAML::Load(yaml));
  if (c.format == "json") {
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << "key,value\n";
    resolved_csv(j, "", std::cout);
  }
  return kExitOk;
}

}  // namespace

void add_design_command(CLI::App& app, Action& action) {
  auto c = std::make_shared<Common>();
  auto d = std::make_shared<DesignOptions>();
  auto* design = app.add_subcommand("design",
                                    "design a fabric: bill of materials, capex by part, power and energy, bisection, "
                                    "diameter, limits (default scenario: aipod-16k, as train's)");
  c->scenario = kDefaultScenario;  // the scenario named on the command line replaces it
  add_common(design, *c, false);
  design
      ->add_option("--cabling-plan", d->cabling_plan,
                   "write every cable as CSV in NetBox's cable-import columns, podnet's data as cf_podnet_* custom "
                   "fields (the same file as 08-cables.csv of --netbox)")
      ->type_name("FILE.csv");
  design
      ->add_option("--cost-csv", d->cost_csv,
                   "write the priced bill as a tidy CSV: one row per tier or link class, part and speed (columns "
                   "group, label, part, speed_gbps, count, count_unit (each, m of fibre, kWh), unit_usd, total_usd)")
      ->type_name("FILE.csv");
  design->add_option("--html", d->html, "also write a self-contained HTML report: the fabric drawn by tier, the BOM")
      ->type_name("FILE.html");
  design
      ->add_option("--netbox", d->netbox_dir,
                   "write NetBox's CSV import set into DIR, loadable in name order into an empty NetBox: custom "
                   "fields, site, racks, manufacturer, device types, roles, devices, interfaces, cables")
      ->type_name("DIR");
  design
      ->add_option("--config-plan", d->config_plan_dir,
                   "write the switches' configuration plan into DIR: addresses from the addressing: pools, ASNs per "
                   "RFC 7938, eBGP sessions per switch-to-switch cable, as FRR (frr/<switch>.conf) and SONiC "
                   "config_db.json fragments (sonic/<switch>.json), switches.csv and ip-addresses.csv (NetBox)")
      ->type_name("DIR");
  design
      ->add_option("--config-switches", d->config_switches,
                   "with --config-plan: write the files of these switches only, shell patterns on their names "
                   "(e.g. 'su000-*,pod000-spine-*'); cut from the whole fabric's plan, so a slice's files are the "
                   "full build's")
      ->delimiter(',')
      ->type_name("GLOB,GLOB");
  design
      ->add_option(
          "--export", d->exports,
          "export the topology: dot (Graphviz: devices, cables labelled with speed, length and ports), graphml "
          "(NetworkX/Gephi: every node and link) or json; "
          "to stdout, or into --out DIR as topology.<format> (and frontend.<format> with a frontend: section)")
      ->check(CLI::IsMember({"dot", "graphml", "json"}));
  design->footer(
      "Examples:\n  podnet design aipod-16k\n  podnet design aipod-16k --set topology.gpus=131072 --format json\n"
      "  podnet design clos-128k --set topology.gpus=1048576 --set topology.tiers=auto   (a million GPUs: 4 tiers)\n"
      "  podnet design my-fabric.yaml --out results/ --cabling-plan results/cables.csv\n"
      "  podnet design leafspine-8k --netbox netbox/\n"
      "  podnet design aipod-16k --config-plan configs/ --set addressing.bgp=unnumbered\n"
      "  podnet design fat-tree-k48 --set topology.k=8 --set server.gpus=4 --set server.nics=4 --export dot | dot "
      "-Tsvg -o fabric.svg");
  design->callback([&action, c, d] { action = [c, d] { return cmd_design(*c, *d); }; });
}

void add_resolve_command(CLI::App& app, Action& action) {
  auto c = std::make_shared<Common>();
  auto* resolve = app.add_subcommand(
      "resolve",
      "print a scenario with every default filled in (YAML, followed by comments saying what each `auto` becomes "
      "on this fabric; --format json or csv: the scenario as data; default scenario: aipod-16k)");
  c->scenario = kDefaultScenario;
  add_common(resolve, *c, false);
  // resolve prints a scenario: YAML, or the same as data; it writes no files and runs nothing (no --out, no
  // --max-memory).
  for (const char* o : {"--out", "--max-memory", "--format"}) resolve->remove_option(resolve->get_option(o));
  resolve
      ->add_option("-f,--format", c->format,
                   "yaml (default: the scenario, with comments on what each `auto` becomes), json or csv (the scenario "
                   "as data)")
      ->type_name("yaml|json|csv")
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            return v == "yaml" || v == "table" || v == "json" || v == "csv" ? "" : "expected yaml, json or csv";
          },
          "", "a format"));
  resolve->footer("Examples:\n"
                  "  podnet resolve aipod-16k                                 # every key, with its default filled in\n"
                  "  podnet resolve leafspine-8k --set topology.gpus=4096 > my.yaml   # a file to edit and run\n"
                  "  podnet resolve my.yaml --format json                     # the scenario as data");
  resolve->callback([&action, c] { action = [c] { return cmd_resolve(*c); }; });
}

}  // namespace podnet::cli
