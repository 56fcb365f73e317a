#include "report/train_report.hpp"
#include "report/reliability_report.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <optional>
#include <ostream>
#include <regex>
#include <sstream>
#include <string_view>

#include "engine/registry.hpp"
#include "reliability/checkpoint.hpp"
#include "report/bench_report.hpp"
#include "report/report.hpp"
#include "report/studies.hpp"
#include "study/scaling.hpp"
#include "telemetry/recorder.hpp"

namespace podnet::report {

namespace {

// A number of days opening its parenthesis, for the table's figures: "156.2 (", or under a day with its hours
// or minutes, "0.010 (14.4 min; " (0.0 said nothing).
bool under_a_day(double days) { return days < 0.95; }
std::string days_open(double days) {
  return under_a_day(days) ? fmt::format("{} ({}; ", fixed(days, 3), duration_text(days * 24))
                           : fixed_or_exp(days, 1) + " (";
}

double ms(Time t) { return round_to(t.seconds() * 1e3, 6); }
double us(Time t) { return round_to(t.seconds() * 1e6, 3); }

nlohmann::json breakdown_json(const workload::Breakdown& b) {
  return {{"compute", ms(b.compute)},
          {"tp", ms(b.tp)},
          {"pp", ms(b.pp)},
          {"dp", ms(b.dp)},
          {"ep", ms(b.ep)},
          {"cp", ms(b.cp)},
          {"optimizer", ms(b.optimizer)},
          {"grad_norm", ms(b.grad_norm)},
          {"loss", ms(b.loss)},
          {"step_overhead", ms(b.step)},
          {"bubble", ms(b.bubble)}};
}

}  // namespace

void add_training(nlohmann::json& o, const workload::TrainResult& r) {
  const workload::Job& j = r.job;
  const workload::ModelSpec& m = j.model;
  // An imported workload (workload/simai.hpp) carries compute times and collectives but no model shape,
  // GPU, batch or sequence size: what depends on them is null ('-' in tables), never a made-up 0.
  const bool known = m.layers > 0 && m.hidden > 0;
  auto val = [known](const nlohmann::json& v) { return known ? v : nlohmann::json(nullptr); };
  o["model"] = {{"name", m.name},
                {"params_billion", val(round_to(r.model_params / 1e9, 3))},
                {"active_params_billion", val(round_to(r.active_params / 1e9, 3))},
                {"layers", val(m.layers)},
                {"hidden", val(m.hidden)},
                {"heads", val(m.heads)},
                {"kv_heads", val(m.kv_heads)},
                {"ffn", val(m.ffn)},
                {"vocab", val(m.vocab)},
                {"seq", val(m.seq)},
                {"experts", val(m.experts)},
                {"top_k", val(m.top_k)}};
  o["gpu"] = {{"name", val(j.gpu.name)},
              {"peak_tflops", val(round_to(j.gpu.peak_flops / 1e12, 3))},
              {"hbm_gbyte", val(round_to(static_cast<double>(j.gpu.hbm_bytes) / 1e9, 3))},
              {"hbm_tbyte_per_s", val(round_to(j.gpu.hbm_bandwidth / 1e12, 3))},
              {"compute_efficiency", val(round_to(j.compute_efficiency, 6))},
              {"default_efficiency", val(round_to(j.gpu.compute_efficiency, 6))},
              {"efficiency_source", val(j.gpu.efficiency_source)},
              {"attention_efficiency", val(round_to(j.attention_efficiency, 6))},
              {"default_attention_efficiency", val(round_to(j.gpu.attention_efficiency, 6))},
              {"attention_source", val(j.gpu.attention_source)},
              {"memory_bound_ops", val(j.memory_bound_ops)},
              {"flash_attention", val(j.flash_attention)},
              {"sustained_fraction", val(round_to(j.sustained_fraction, 6))},
              {"layer_overhead_us", val(round_to(j.layer_overhead * 1e6, 3))},
              {"default_sustained_fraction", val(round_to(j.gpu.sustained_fraction, 6))},
              {"default_layer_overhead_us", val(round_to(j.gpu.layer_overhead * 1e6, 3))},
              {"sustained_source", val(j.gpu.sustained_source)},
              {"precision", val(j.precision == workload::Precision::Fp8 ? "fp8" : "bf16")}};
  if (j.precision == workload::Precision::Fp8) {
    o["gpu"]["fp8_peak_tflops"] = val(round_to(j.gpu.fp8_peak_flops / 1e12, 3));
    o["gpu"]["fp8_efficiency"] = val(round_to(j.fp8_efficiency, 6));
    o["gpu"]["default_fp8_efficiency"] = val(round_to(j.gpu.fp8_efficiency, 6));
    o["gpu"]["fp8_efficiency_source"] = val(j.gpu.fp8_efficiency_source);
  }
  nlohmann::json stage_layers = nlohmann::json::array();
  if (m.layers > 0)
    for (int64_t i = 0; i < j.pp; ++i) stage_layers.push_back(j.stage_layers(i));
  o["parallelism"] = {{"tp", j.tp},
                      {"cp", j.cp},
                      {"pp", j.pp},
                      {"dp", j.dp},
                      {"stage_layers", stage_layers},
                      {"ep", j.ep},
                      {"interleave", j.interleave},
                      {"rank_order", j.pipeline_inner ? "tp-cp-pp-dp" : "tp-cp-dp-pp"},
                      {"overlap_param_gather", j.overlap_param_gather},
                      {"sequence_parallel", j.sequence_parallel},
                      {"zero", j.zero},
                      {"recompute", workload::recompute_name(j.recompute.mode)},
                      {"gpus", j.gpus()},
                      {"fabric_gpus", r.fabric_gpus}};
  o["batch"] = {{"microbatch", val(j.microbatch)},
                {"global_batch", val(j.global_batch)},
                {"microbatches_per_pipeline", j.microbatches()},
                {"tokens_per_iteration", val(static_cast<int64_t>(j.tokens_per_iteration()))}};
  o["engine"] = r.engine;
  o["iteration_time_ms"] = ms(r.iteration);
  o["breakdown_ms"] = breakdown_json(r.breakdown);
  o["critical_stage"] = r.critical_stage;
  nlohmann::json stages = nlohmann::json::array();
  for (size_t s = 0; s < r.stages.size(); ++s) {
    nlohmann::json row = breakdown_json(r.stages[s]);
    row["stage"] = s;
    stages.push_back(row);
  }
  o["stages_ms"] = stages;
  if (j.speed_cv > 0 || j.jitter_cv > 0 || (j.slow_host_share > 0 && j.slow_host_forward > 0)) {
    const auto& v = r.variability;
    const auto [lo, hi] = std::minmax_element(v.factor.begin(), v.factor.end());
    o["variability"] = {{"speed_cv", j.speed_cv},
                        {"jitter_cv", j.jitter_cv},
                        {"slowest_gpu", v.slowest_gpu},
                        {"slowest_factor", round_to(v.slowest, 6)},
                        {"stage_factor", {{"min", round_to(*lo, 6)}, {"max", round_to(*hi, 6)}}},
                        {"compute_added_ms", ms(r.variability_added)}};
    if (j.slow_host_share > 0 && j.slow_host_forward > 0)
      o["variability"]["slow_hosts"] = {{"share", j.slow_host_share},
                                        {"forward_slowdown", j.slow_host_forward},
                                        {"in_job", v.slow_hosts},
                                        {"job_hosts", v.job_hosts}};
  }
  o["mfu"] = val(round_to(r.mfu, 6));
  if (j.precision == workload::Precision::Fp8 && j.gpu.fp8_peak_flops > 0)
    o["mfu_of_fp8_peak"] = val(round_to(r.mfu * j.gpu.peak_flops / j.gpu.fp8_peak_flops, 6));
  o["hfu"] = val(round_to(r.hfu, 6));
  o["tflops_per_gpu"] = val(round_to(r.tflops_per_gpu, 3));
  o["tokens_per_second"] = val(round_to(r.tokens_per_second, 1));
  o["tokens_budget"] = val(j.tokens);
  o["days_to_train"] = val(round_to(r.days_to_train, 3));
  o["ideal_bubble_fraction"] = round_to(r.ideal_bubble_fraction, 6);
  o["flops_per_iteration"] = {{"model", val(r.model_flops)}, {"hardware", val(r.hardware_flops)}};
  const auto& g = r.groups;
  o["groups"] = {{"tp", {{"count", g.tp_groups}, {"size", g.tp_size}}},
                 {"pp", {{"count", g.pp_groups}, {"size", g.pp_size}}},
                 {"dp", {{"count", g.dp_groups}, {"size", g.dp_size}}},
                 {"ep", {{"count", g.ep_groups}, {"size", g.ep_size}}},
                 {"edp", {{"count", g.edp_groups}, {"size", g.edp_size}}}};
  const auto& v = r.volumes;  // from the model (an import's traffic is in "imported")
  o["volumes"] = {{"tp_allreduce_bytes", val(v.tp_allreduce_bytes)},
                  {"tp_allreduces_per_layer", val(v.tp_allreduces_per_layer)},
                  {"tp_bytes_per_gpu", val(round_to(v.tp_bytes_per_gpu, 0))},
                  {"pp_p2p_bytes", val(v.pp_p2p_bytes)},
                  {"pp_bytes_per_gpu", val(round_to(v.pp_bytes_per_gpu, 0))},
                  {"dp_grad_bytes_per_gpu", val(round_to(v.dp_grad_bytes_per_gpu, 0))},
                  {"dp_bytes_per_gpu", val(round_to(v.dp_bytes_per_gpu, 0))},
                  {"ep_alltoall_bytes", val(v.ep_alltoall_bytes)},
                  {"ep_bytes_per_gpu", val(round_to(v.ep_bytes_per_gpu, 0))},
                  {"cp_kv_bytes", val(v.cp_kv_bytes)},
                  {"cp_kv_steps_per_layer", val(v.cp_kv_steps_per_layer)},
                  {"cp_bytes_per_gpu", val(round_to(v.cp_bytes_per_gpu, 0))}};
  if (m.layers > 0) {
    const auto& mem = r.memory;
    const double gb = 1e9;
    o["memory_gbyte"] = {{"stage", mem.stage},
                         {"weights", round_to(mem.weights / gb, 3)},
                         {"gradients", round_to(mem.gradients / gb, 3)},
                         {"optimizer", round_to(mem.optimizer / gb, 3)},
                         {"activations", round_to(mem.activations / gb, 3)},
                         {"buffers", round_to(mem.buffers / gb, 3)},
                         {"total", round_to(mem.total() / gb, 3)},
                         {"hbm", round_to(static_cast<double>(j.gpu.hbm_bytes) / gb, 3)},
                         {"fits", mem.total() <= static_cast<double>(j.gpu.hbm_bytes)},
                         {"activation_per_layer", round_to(mem.activation_bytes_per_layer / gb, 6)},
                         {"inflight_microbatches", round_to(mem.inflight_microbatches, 6)}};
  }
  const auto& t = r.times;
  // One model chunk's op times and its layers (a chunk of 0 layers, the first of a stage whose layers
  // `stage_layers: auto` moved elsewhere, takes no time).
  const auto chunk_ops = [&](size_t s, size_t c) {
    const auto& op = t.ops[s][c];
    return nlohmann::json{{"layers", j.layers_of(static_cast<int64_t>(s), static_cast<int64_t>(c))},
                          {"forward_compute_ms", ms(op.fwd_compute)},
                          {"backward_compute_ms", ms(op.bwd_compute)},
                          {"forward_tp_ms", ms(op.fwd_tp)},
                          {"backward_tp_ms", ms(op.bwd_tp)},
                          {"forward_ep_ms", ms(op.fwd_ep)},
                          {"backward_ep_ms", ms(op.bwd_ep)},
                          {"optimizer_ms", ms(t.optimizer[s])}};
  };
  nlohmann::json ops = nlohmann::json::object();
  if (!t.ops.empty() && !t.ops.front().empty()) ops = chunk_ops(0, 0);
  o["timings"] = {{"tp_collective_us", val(us(t.tp_collective))},
                  {"ep_collective_us", val(us(t.ep_collective))},
                  {"cp_step_us", val(us(t.cp_step))},
                  {"stage0_chunk0", ops}};
  // When stage 0's first chunk has no layers: the first chunk that has, with where it is.
  if (!ops.empty() && ops["layers"].get<int64_t>() == 0)
    for (size_t s = 0; s < t.ops.size() && !o["timings"].contains("first_chunk_with_layers"); ++s)
      for (size_t c = 0; c < t.ops[s].size(); ++c)
        if (j.layers_of(static_cast<int64_t>(s), static_cast<int64_t>(c)) > 0) {
          nlohmann::json first = chunk_ops(s, c);
          first["stage"] = s;
          first["chunk"] = c;
          o["timings"]["first_chunk_with_layers"] = first;
          break;
        }
  o["plan"] = {{"transfers", r.plan_transfers},         {"p2p_transfers", r.p2p_transfers},
               {"dp_collectives", r.dp_collectives},    {"dp_buckets_per_group", r.dp_buckets},
               {"bucket_params", val(r.bucket_params)}, {"flows", r.flows}};
  // What the DP collectives ran as (NCCL's tuner picks per size; protocol "" when the algorithm has none).
  nlohmann::json choices = nlohmann::json::array();
  for (const auto& [k, n] : r.dp_choices)
    choices.push_back({{"op", std::get<0>(k)},
                       {"algorithm", std::get<1>(k)},
                       {"protocol", std::get<2>(k)},
                       {"channels", std::get<3>(k)},
                       {"collectives", n}});
  if (!choices.empty()) o["plan"]["dp_choices"] = choices;
  if (r.placement.present) {
    const auto& p = r.placement;
    nlohmann::json per_group = nlohmann::json::array();
    for (const auto& [grp, n] : p.gpus_per_group) per_group.push_back({{"group", grp}, {"gpus", n}});
    auto frac = [](double a, double b) { return round_to(b > 0 ? a / b : 0.0, 6); };
    o["placement"] = {{"policy", p.policy},
                      {"cross_spine_fraction", round_to(p.cross_spine_fraction(), 6)},
                      {"cross_super_spine_fraction", round_to(p.cross_super_spine_fraction(), 6)},
                      {"dp_cross_spine_fraction", frac(p.dp_cross_group_bytes, p.dp_bytes)},
                      {"pp_cross_spine_fraction", frac(p.pp_cross_group_bytes, p.pp_bytes)},
                      {"dp_bytes", round_to(p.dp_bytes, 0)},
                      {"pp_bytes", round_to(p.pp_bytes, 0)},
                      {"same_as_packed", p.same_as_packed},
                      {"groups_used", p.gpus_per_group.size()},
                      {"pods_used", p.pods},
                      {"gpus_per_group", per_group}};
    if (p.zones) o["placement"]["cross_core_fraction"] = round_to(p.cross_core_fraction(), 6);
    if (p.dp_bytes + p.pp_bytes <= 0)  // an import without the model's sizes: nothing to count, not 0 %
      for (const char* k : {"cross_spine_fraction", "cross_super_spine_fraction", "dp_cross_spine_fraction",
                            "pp_cross_spine_fraction", "cross_core_fraction"})
        if (o["placement"].contains(k)) o["placement"][k] = nullptr;
    if (p.ep_bytes > 0) {
      o["placement"]["ep_bytes"] = round_to(p.ep_bytes, 0);
      o["placement"]["ep_cross_spine_fraction"] = frac(p.ep_cross_group_bytes, p.ep_bytes);
      o["placement"]["ep_servers_per_group"] = p.ep_servers;
    }
    if (p.torus_cubes) o["placement"]["torus_cubes"] = true;  // the groups are cubes: the "spine" is a cube face
  }
  o["definitions"] = {
      {"mfu", "model FLOPs per iteration (forward + backward, no recompute: 3 x (2 x active matmul params + 4 s h "
              "per layer + 2 h V) per token) / (GPUs x dense BF16 peak x iteration time), whatever workload.precision; "
              "mfu_of_fp8_peak (precision fp8) divides by the dense FP8 peak instead, as NVIDIA's FP8 recipes do"},
      {"hfu", "hardware FLOPs (with recompute; Megatron's F = 96 B s l h^2 (1 + s/6h + V/16lh) for GPT) / (GPUs x "
              "peak x iteration time)"},
      {"memory", "per GPU of the stage needing the most: weights, gradients and Adam states by ZeRO stage (2 + 2 + "
                 "12 bytes per parameter, Rajbhandari et al. 2020), activations of the in-flight microbatches "
                 "(Korthikanti et al. 2022: 34 s b h + 5 a s^2 b per layer, by recompute, SP and CP), buffers"},
      {"breakdown", "the critical pipeline stage's timeline: its compute, TP, EP and CP ops, its fixed costs (the "
                    "optimizer step, the "
                    "gradient norm, the logging loss's all-reduce, the step overhead), and its idle gaps split "
                    "into pp (waiting for a p2p in flight), dp (waiting for a DP collective) and bubble (waiting for "
                    "another stage's compute); exposed = on the critical path, not overlapped with compute"}};
}

namespace {

// The network the job ran on, in one line ("" for a document without it).
std::string network_line(const nlohmann::json& o) {
  if (!o.contains("network")) return "";
  const auto& n = o["network"];
  const int64_t tiers = n["switch_tiers"].get<int64_t>(), nics = n["nics_per_server"].get<int64_t>();
  // The packet engine's congestion control, and its PFC and routing: " (nscc, PFC on, routing ecmp)".
  std::string cc;
  if (n.contains("cc")) {
    cc = " (" + n["cc"].get<std::string>();
    if (n.contains("pfc"))
      cc += fmt::format(", PFC {}, routing {}", n["pfc"].get<bool>() ? "on" : "off", n["routing"].get<std::string>());
    cc += ")";
  }
  return fmt::format("{}{}{}{}{}", n["family"].get<std::string>(),
                     n.value("rail_optimized", false) ? ", rail-optimized" : "",
                     tiers > 0 ? fmt::format(", {} switch tier{}", tiers, tiers == 1 ? "" : "s") : "",
                     nics > 0 ? fmt::format(", {} x {} NIC{} per server{}, {}", nics, n["nic_speed"].get<std::string>(),
                                            nics == 1 ? "" : "s",
                                            n.contains("nic_planes")
                                                ? fmt::format(" (each {} planes of {})", n["nic_planes"].get<int64_t>(),
                                                              format_bandwidth(Bandwidth(
                                                                  n["nic_gbyte_per_s"].get<double>() * 8e9 /
                                                                  static_cast<double>(n["nic_planes"].get<int64_t>()))))
                                                : "",
                                            n["transport"].get<std::string>())
                              : ", no NICs",
                     cc);
}

// GPUs of the fabric the job leaves idle, and why ("" when it uses them all).
std::string idle_gpus_note(const nlohmann::json& o) {
  const auto& par = o["parallelism"];
  const auto& b = o["batch"];
  const bool chakra = o.contains("chakra");
  if (const int64_t gpus = par["gpus"].get<int64_t>(), fabric = par["fabric_gpus"].get<int64_t>();
      !chakra && gpus < fabric && b["global_batch"].is_number_integer() && b["microbatch"].is_number_integer()) {
    // Idle GPUs, and why: the layout does not divide the fabric, or the batch does not split over more replicas.
    const int64_t mp = par["tp"].get<int64_t>() * par["cp"].get<int64_t>() * par["pp"].get<int64_t>();
    const int64_t batch = b["global_batch"].get<int64_t>(), mb = b["microbatch"].get<int64_t>();
    const int64_t full = fabric / mp;  // replicas that fit
    std::string why;
    if (full * mp < fabric)
      why = fmt::format("tp x cp x pp = {} does not divide the fabric's {} GPUs", thousands(mp), thousands(fabric));
    // With the interleaved schedule, auto DP is the largest whose pipelines get a multiple of pp microbatches.
    const int64_t pp = par["pp"].get<int64_t>(), seqs = batch / std::max<int64_t>(1, mb);
    const bool interleaved = par["interleave"].get<int64_t>() > 1 && pp > 1;
    // auto DP; the largest DP that splits the batch at all
    const int64_t auto_dp = workload::largest_dp(seqs, full, interleaved ? pp : 1),
                  split_dp = workload::largest_dp(seqs, full, 1);
    const int64_t dp = par["dp"].get<int64_t>();
    // The batches nearest the job's that split over `per` (the one below when there is one, and the one above).
    const auto fills = [&](int64_t per) {
      const int64_t below = batch / per * per, above = (batch + per - 1) / per * per;
      return below > 0 && below != above ? fmt::format("{} or {}", thousands(below), thousands(above))
                                         : thousands(above);
    };
    if (par.value("dp_given", false) && full > dp) {
      // workload.dp pinned (the scenario's or a --set): a larger batch alone keeps it, so the way out names it.
      if (auto_dp > dp)
        why += fmt::format("{}workload.dp is {}; left out (--set workload.dp=) it would be {}", why.empty() ? "" : "; ",
                           dp, auto_dp);
      else {
        const int64_t per = full * mb * (interleaved ? pp : 1);
        why += fmt::format("{}workload.dp is {}: to run DP{}, leave it out (--set workload.dp=) and set global_batch "
                           "{}{}",
                           why.empty() ? "" : "; ", dp, full, fills(per),
                           interleaved ? fmt::format(" (each pipeline a multiple of pp {} microbatches, as the "
                                                     "interleaved schedule needs)",
                                                     pp)
                                       : "");
      }
    } else if (interleaved && auto_dp == dp && split_dp > auto_dp) {
      why += fmt::format("{}DP{} is the largest that gives each pipeline a multiple of pp {} microbatches (here {}), "
                         "as the interleaved schedule (interleave {}) needs; global_batch {} would run DP{}",
                         why.empty() ? "" : "; ", auto_dp, pp, thousands(seqs / auto_dp),
                         par["interleave"].get<int64_t>(), fills(full * mb * pp), full);
    } else if (full > dp && batch % (full * mb) == 0) {  // the batch splits: dp was given
      why += fmt::format("{}workload.dp is {}; left out (auto) it would be {}", why.empty() ? "" : "; ", dp, full);
    } else if (full > dp) {
      why += fmt::format("{}DP{} is the largest that divides the {} microbatches of {} (global_batch {} / microbatch "
                         "{}); global_batch {} would run DP{}",
                         why.empty() ? "" : "; ", dp, thousands(batch / mb), mb, thousands(batch), mb,
                         fills(full * mb * (interleaved ? pp : 1)), full);
    }
    return fmt::format("{} of the fabric's {} GPUs stay idle: {}", thousands(fabric - gpus), thousands(fabric),
                       why.empty() ? "workload.dp leaves them out" : why);
  }
  return "";
}

// What the job's layout or the servers leave out that a reader would otherwise miss: an MoE model without
// expert parallelism (no all-to-all runs), NICs faster than the GPUs' PCIe links (which then bind).
std::vector<std::string> layout_notes(const nlohmann::json& o) {
  std::vector<std::string> notes;
  if (o.contains("model") && o["model"].contains("experts") && o["model"]["experts"].is_number_integer() &&
      o["model"]["experts"].get<int64_t>() > 1 && o["parallelism"]["ep"].is_number_integer() &&
      o["parallelism"]["ep"].get<int64_t>() == 1)
    notes.push_back(fmt::format("{} has {} experts and workload.ep is 1: every GPU holds all of them and no "
                                "all-to-all runs; set workload.ep (it divides dp and the experts) to spread them",
                                o["model"]["name"].get<std::string>(), o["model"]["experts"].get<int64_t>()));
  // NCCL's tuner picks PAT from its cost model of an idle fabric (faster NICs make it cheaper there), which can make
  // the step slower under the job's own traffic: a reader comparing NICs must know which algorithm ran.
  if (o.contains("plan") && o["plan"].contains("dp_choices")) {
    bool pat = false;
    for (const auto& c : o["plan"]["dp_choices"]) pat = pat || c.value("algorithm", "") == "pat";
    if (pat)
      notes.push_back("NCCL's tuner chose PAT for data-parallel collectives: it prices each algorithm on an idle "
                      "fabric, not under the job's own traffic. To time rings instead: --set "
                      "'collective.algorithms=^pat' (podnet diff compares two choices)");
  }
  if (o.contains("network") && o["network"].contains("pcie_gbyte_per_s")) {
    const double nic = o["network"]["nic_gbyte_per_s"].get<double>(),
                 pcie = o["network"]["pcie_gbyte_per_s"].get<double>();
    if (pcie > 0 && nic > pcie)
      notes.push_back(fmt::format("a NIC's {} ({} GB/s) is more than a GPU's PCIe link ({} GB/s): a GPU sends "
                                  "through its NIC at most at the PCIe rate; set server.pcie_bandwidth to your "
                                  "servers' (PCIe Gen6 x16: 128GB/s)",
                                  o["network"]["nic_speed"].get<std::string>(), fixed(nic, 0), fixed(pcie, 0)));
  }
  return notes;
}

// What the model's recipe did not set, and why (the train report's notes on it).
std::vector<std::string> recipe_notes(const nlohmann::json& o) {
  std::vector<std::string> notes;
  if (o.contains("no_recipe")) {  // a preset model without a published recipe: podnet's defaults, said
    std::string list;
    for (const auto& [k, v] : o["no_recipe"]["defaults_used"].items())
      list += (list.empty() ? "" : ", ") + k + " " + v.get<std::string>();
    notes.push_back(fmt::format("podnet holds no published training recipe for {}, so these are podnet's defaults: "
                                "{}; set them to your job's (workload.KEY)",
                                o["no_recipe"]["model"].get<std::string>(), list));
  }
  if (!o.contains("recipe")) return notes;
  const auto& r = o["recipe"];
  auto keys = [](const nlohmann::json& a) {
    std::string out;
    for (const auto& k : a) out += (out.empty() ? "" : ", ") + k.get<std::string>();
    return out;
  };
  for (const auto& k : r["from_defaults"])
    if (k == "global_batch")
      notes.push_back(fmt::format("global batch {} is podnet's default (the {} recipe gives none): set "
                                  "workload.global_batch to your job's",
                                  thousands(o["batch"]["global_batch"].get<int64_t>()), r["model"].get<std::string>()));
  std::set<std::string> from_file;  // said by the note on a model set over the file's keys, below
  for (const auto& k : r["model_from_command_line_over_file_keys"]) from_file.insert(k.get<std::string>());
  // A group's keys given ("workload.tp, workload.pp") and the recipe's values listed ("cp 2, interleave 5"); none
  // when every key given comes from the file under a model set on the command line (said by its own note).
  struct GroupText {
    std::string given, values;
  };
  const auto group_text = [&](const nlohmann::json& g, const char* values) -> std::optional<GroupText> {
    if (std::all_of(g["given"].begin(), g["given"].end(),
                    [&](const nlohmann::json& k) { return from_file.count(k.get<std::string>()) > 0; }))
      return std::nullopt;
    GroupText t;
    for (const auto& [k, v] : g[values].items())
      t.values += (t.values.empty() ? "" : ", ") + k + " " + v.get<std::string>();
    for (const auto& k : g["given"]) t.given += (t.given.empty() ? "workload." : ", workload.") + k.get<std::string>();
    return t;
  };
  for (const auto& g : r["groups_not_applied"])
    if (const auto t = group_text(g, "recipe_values_not_used"))
      notes.push_back(fmt::format("{} {} given, so the {} recipe's other {} keys are not used ({}): they take "
                                  "podnet's defaults; give them too to keep them",
                                  t->given, g["given"].size() == 1 ? "is" : "are", r["model"].get<std::string>(),
                                  g["group"].get<std::string>(), t->values));
  // Keys given at the recipe's own values keep its group (a what-if that repeats a value changes nothing): said, as
  // a user who gives tp and pp expects the rest of the layout to be theirs too.
  for (const auto& g : r.value("groups_kept_at_recipe_values", nlohmann::json::array()))
    if (const auto t = group_text(g, "recipe_values_used"))
      notes.push_back(fmt::format("{} {} given at the {} recipe's own value{}, so the recipe's other {} keys apply "
                                  "too ({}): give them to change them",
                                  t->given, g["given"].size() == 1 ? "is" : "are", r["model"].get<std::string>(),
                                  g["given"].size() == 1 ? "" : "s", g["group"].get<std::string>(), t->values));
  if (!r["model_from_command_line_over_file_keys"].empty())
    notes.push_back(fmt::format("the model is set on the command line, but {} come from the scenario file; "
                                "--set workload.recipe=preset takes {}'s recipe instead",
                                keys(r["model_from_command_line_over_file_keys"]), r["model"].get<std::string>()));
  return notes;
}

}  // namespace

nlohmann::json reshaped_keys(const workload::ModelSpec& m) {
  nlohmann::json changed = nlohmann::json::array();
  for (const char* k : workload::reshaped_fields(m)) changed.push_back(k);
  return changed;
}

std::string model_label(const nlohmann::json& model) {
  std::string name = model["name"].get<std::string>();
  if (!model.contains("reshaped") || model["reshaped"].empty()) return name;
  std::string keys;
  for (const auto& k : model["reshaped"]) keys += (keys.empty() ? "" : ", ") + k.get<std::string>();
  return fmt::format("a model from {} ({} changed)", name, keys);
}

std::string dp_choices_text(const nlohmann::json& o) {
  if (!o.contains("plan") || !o["plan"].contains("dp_choices")) return {};
  std::string list;
  for (const auto& c : o["plan"]["dp_choices"]) {
    const std::string proto = c["protocol"].get<std::string>();
    list += fmt::format("{}{} {} {}{} on {} channel{}", list.empty() ? "" : ", ",
                        thousands(c["collectives"].get<int64_t>()), c["op"].get<std::string>(),
                        c["algorithm"].get<std::string>(), proto.empty() ? "" : "/" + proto,
                        c["channels"].get<int32_t>(), c["channels"].get<int32_t>() == 1 ? "" : "s");
  }
  return list;
}

void write_training_table(const nlohmann::json& o, std::ostream& out) {
  const auto& m = o["model"];
  const auto& par = o["parallelism"];
  const auto& b = o["batch"];
  // Figures an imported workload does not know are null: '-'.
  auto num = [](const nlohmann::json& v, int digits, double scale = 1.0, const std::string& unit = "") {
    return v.is_null() ? std::string("-") : fixed(scale * v.get<double>(), digits) + unit;
  };
  out << fmt::format("podnet train: {} ({}) on {} x {} ({} of {} GPUs), {} engine\n", model_label(m),
                     m["params_billion"].is_null() ? "params -" : num(m["params_billion"], 1) + "B params",
                     thousands(par["gpus"].get<int64_t>()),
                     o["gpu"]["name"].is_null() ? "-" : o["gpu"]["name"].get<std::string>(),
                     thousands(par["gpus"].get<int64_t>()), thousands(par["fabric_gpus"].get<int64_t>()),
                     o["engine"].get<std::string>() +
                         (o.value("packet_engine", "") == "partitioned" ? " (partitioned)" : ""));
  if (const std::string n = network_line(o); !n.empty()) out << "  network: " << n << "\n";
  if (o.contains("packet_counters")) {  // bench's counters, over the iteration's engine runs
    const auto& k = o["packet_counters"];
    const auto n = [&](const char* key) { return thousands(k[key].get<int64_t>()); };
    out << fmt::format("  packets, over {}: {} drops, {} trimmed, {} ECN marks, {} PAUSE frames (most paused port {} "
                       "us), {} retransmissions, {} timeouts\n",
                       plural(k["runs"].get<int64_t>(), "engine run", "engine runs"), n("drops"), n("trimmed"),
                       n("ecn_marks"), n("pause_frames"), fixed(k["paused_max_us"].get<double>(), 2),
                       n("retransmissions"), n("timeouts"));
  }
  const bool chakra = o.contains("chakra");
  if (const std::string idle = idle_gpus_note(o); !idle.empty()) out << "  " << idle << "\n";
  if (chakra) {
    const auto& c = o["chakra"];
    const auto count = [](const nlohmann::json& n, const char* one, const char* many) {
      return fmt::format("{} {}", thousands(n.get<int64_t>()), n.get<int64_t>() == 1 ? one : many);
    };
    out << fmt::format("  {} ranks from Chakra traces {} (version {}): {}, {}, {}, {} that take no time\n"
                       "  (parallelism, batch, sequence and GPU are not in a trace: -)\n",
                       c["ranks"].get<int64_t>(), c["source"].get<std::string>(),
                       c["version"].get<std::string>().empty() ? "-" : c["version"].get<std::string>(),
                       count(c["nodes"], "node", "nodes"), count(c["collectives"], "collective", "collectives"),
                       count(c["p2p_pairs"], "send/recv pair", "send/recv pairs"),
                       count(c["skipped_nodes"], "node", "nodes"));
  } else if (m["seq"].is_null()) {  // an import: the file gives the layout and the microbatch count, not the batch
    out << fmt::format("  TP{} x PP{} x DP{}{}{}, {} microbatch{} per pipeline (batch, sequence and GPU from the "
                       "file's compute times: -)\n",
                       par["tp"].get<int64_t>(), par["pp"].get<int64_t>(), par["dp"].get<int64_t>(),
                       par["ep"].get<int64_t>() > 1 ? fmt::format(" (EP{})", par["ep"].get<int64_t>()) : "",
                       par["interleave"].get<int64_t>() > 1
                           ? fmt::format(", interleave {}", par["interleave"].get<int64_t>())
                           : "",
                       b["microbatches_per_pipeline"].get<int64_t>(),
                       b["microbatches_per_pipeline"].get<int64_t>() == 1 ? "" : "es");
  } else {
    out << fmt::format(
        "  TP{}{} x PP{} x DP{}{}{}{}{}{}, global batch {} x seq {}, microbatch {} ({} per pipeline), "
        "compute efficiency {:.1f}%\n",
        par["tp"].get<int64_t>(), par["cp"].get<int64_t>() > 1 ? fmt::format(" x CP{}", par["cp"].get<int64_t>()) : "",
        par["pp"].get<int64_t>(), par["dp"].get<int64_t>(),
        par["ep"].get<int64_t>() > 1 ? fmt::format(" (EP{})", par["ep"].get<int64_t>()) : "",
        par["interleave"].get<int64_t>() > 1 ? fmt::format(", interleave {}", par["interleave"].get<int64_t>()) : "",
        par["sequence_parallel"].get<bool>() && par["tp"].get<int64_t>() > 1 ? ", SP" : "",
        par["zero"].get<int>() > 0 ? fmt::format(", ZeRO-{}", par["zero"].get<int>()) : "",
        par["recompute"].get<std::string>() != "none"
            ? fmt::format(", {} recompute", par["recompute"].get<std::string>())
            : "",
        thousands(b["global_batch"].get<int64_t>()), thousands(m["seq"].get<int64_t>()), b["microbatch"].get<int64_t>(),
        thousands(b["microbatches_per_pipeline"].get<int64_t>()), 100 * o["gpu"]["compute_efficiency"].get<double>());
    if (!o["gpu"]["efficiency_source"].get<std::string>().empty())
      out << fmt::format("  (the {} default {:.1f}%: {})\n", o["gpu"]["name"].get<std::string>(),
                         100 * o["gpu"]["default_efficiency"].get<double>(),
                         o["gpu"]["efficiency_source"].get<std::string>());
    if (o["gpu"].contains("attention_efficiency") && o["gpu"]["attention_efficiency"].get<double>() > 0)
      out << fmt::format("  attention core {:.1f}% of peak on its causal half ({}){}\n",
                         100 * o["gpu"]["attention_efficiency"].get<double>(),
                         o["gpu"]["attention_efficiency"] == o["gpu"]["default_attention_efficiency"]
                             ? o["gpu"]["attention_source"].get<std::string>()
                             : std::string("workload.attention_efficiency"),
                         o["gpu"]["memory_bound_ops"].get<bool>() ? ", element-wise kernels at HBM bandwidth" : "");
    if (o["gpu"].contains("fp8_efficiency"))
      out << fmt::format(
          "  FP8 GEMMs in the transformer layers (workload.precision fp8) at {:.1f}% of the {:.0f} TFLOPS "
          "FP8 peak ({}){}\n",
          100 * o["gpu"]["fp8_efficiency"].get<double>(), o["gpu"]["fp8_peak_tflops"].get<double>(),
          o["gpu"]["fp8_efficiency"] == o["gpu"]["default_fp8_efficiency"]
              ? o["gpu"]["fp8_efficiency_source"].get<std::string>()
              : std::string("workload.fp8_efficiency"),
          o["gpu"]["memory_bound_ops"].get<bool>() ? ", their casts through HBM" : "");
    if (o["gpu"].contains("flash_attention") && !o["gpu"]["flash_attention"].get<bool>())
      out << "  attention core unfused (no FlashAttention): 4 s h at the GEMM rate, its s x s scores through HBM\n";
    if (o["gpu"].contains("sustained_fraction"))
      out << fmt::format("  a step sustains {:.0f}% of the kernels' modelled speed, + {:.0f} us per layer pass ({})\n",
                         100 * o["gpu"]["sustained_fraction"].get<double>(),
                         o["gpu"]["layer_overhead_us"].get<double>(),
                         o["gpu"]["sustained_fraction"] == o["gpu"]["default_sustained_fraction"] &&
                                 o["gpu"]["layer_overhead_us"] == o["gpu"]["default_layer_overhead_us"]
                             ? o["gpu"]["sustained_source"].get<std::string>()
                             : std::string("workload.sustained_fraction / workload.layer_overhead"));
  }
  if (o.contains("recipe")) {
    const auto& r = o["recipe"];
    auto keys = [](const nlohmann::json& a) {
      std::string out;
      for (const auto& k : a) out += (out.empty() ? "" : ", ") + k.get<std::string>();
      return out;
    };
    if (!r["from_preset"].empty()) {
      out << fmt::format("  from the {} recipe: {}\n    ({})\n", r["model"].get<std::string>(), keys(r["from_preset"]),
                         r["source"].get<std::string>());
      // The source cites the recipe's values; say which of them the scenario replaced (its own tokens, not 15T).
      if (r.contains("scenario_over_recipe") && !r["scenario_over_recipe"].empty())
        out << fmt::format("    (given by the scenario instead: {})\n", keys(r["scenario_over_recipe"]));
    }
  }
  for (const std::string& n : recipe_notes(o)) out << "  note: " << n << "\n";  // also a model without a recipe's
  for (const std::string& n : layout_notes(o)) out << "  note: " << n << "\n";
  if (!par["stage_layers"].empty()) {
    std::string list;
    for (const auto& n : par["stage_layers"]) list += (list.empty() ? "" : ", ") + std::to_string(n.get<int64_t>());
    out << "  layers per stage: [" << list << "]\n";
  }
  out << "\n";
  const double it = o["iteration_time_ms"].get<double>();
  Table t({"", "value"});
  // With injected failures the headline is the failure-free iteration; the failed one is below it.
  t.add({o.contains("failures") ? "iteration time, no failures" : "iteration time", fixed(it, 2) + " ms"});
  const auto& bd = o["breakdown_ms"];
  const std::vector<const char*> parts = chakra
                                             ? std::vector<const char*>{"compute", "collective", "p2p", "idle"}
                                             : std::vector<const char*>(kTrainingParts.begin(), kTrainingParts.end());
  for (const char* k : parts) {
    if (!bd.contains(k)) continue;  // a document of an older podnet
    const double v = bd[k].get<double>();
    const std::string plain = k;
    if (plain == "step_overhead" && v == 0) continue;  // a setting (workload.step_overhead), shown when set
    const std::string label = "  " + breakdown_label(plain);
    t.add({label, fmt::format("{} ms ({}%)", fixed(v, 2), fixed(it > 0 ? 100 * v / it : 0, 1))});
    if (plain == "compute" && o.contains("variability")) {
      const auto& v = o["variability"];
      const double added = v["compute_added_ms"].get<double>();
      t.add({"    of which variability (compute added)",
             fmt::format("{} ms ({}%); the slowest GPU, {}, at {}x", fixed(added, 2),
                         fixed(it > 0 ? 100 * added / it : 0, 1), thousands(v["slowest_gpu"].get<int64_t>()),
                         fixed(v["slowest_factor"].get<double>(), 3))});
      if (v.contains("slow_hosts"))
        t.add({"    slow hosts",
               fmt::format("{} of the job's {} servers, forward passes +{}%", v["slow_hosts"]["in_job"].get<int64_t>(),
                           thousands(v["slow_hosts"]["job_hosts"].get<int64_t>()),
                           fixed(100 * v["slow_hosts"]["forward_slowdown"].get<double>(), 0))});
    }
  }
  // The injected failures' iteration beside the headline (what they did, event by event: below the table).
  if (o.contains("failures") && o["failures"].contains("iteration_ms")) {
    const auto& f = o["failures"];
    t.add({"iteration time with the injected failures",
           f.value("job_failed", false) ? fmt::format("job failed at {} ms", fixed(f["iteration_ms"].get<double>(), 2))
                                        : fmt::format("{} ms ({}x)", fixed(f["iteration_ms"].get<double>(), 2),
                                                      fixed(f["slowdown"].get<double>(), 3))});
  }
  // With injected failures, the rows below are the failure-free run's: said in their labels (they read as the
  // failed run's, right under its iteration time).
  const std::string intact = o.contains("failures") && o["failures"].contains("iteration_ms") ? ", no failures" : "";
  t.add({"MFU (model FLOPs)" + intact, num(o["mfu"], 1, 100, "%")});
  if (o.contains("mfu_of_fp8_peak"))
    t.add({"MFU of the FP8 peak (NVIDIA's recipes)" + intact, num(o["mfu_of_fp8_peak"], 1, 100, "%")});
  t.add({"HFU (with recompute)" + intact, num(o["hfu"], 1, 100, "%")});
  t.add({"TFLOP/s per GPU (hardware)" + intact, num(o["tflops_per_gpu"], 1)});
  t.add({"tokens/s" + intact, o["tokens_per_second"].is_null()
                                  ? std::string("-")
                                  : thousands(std::llround(o["tokens_per_second"].get<double>()))});
  if (o.contains("cost") && o["cost"].contains("network_capex_usd_per_token_per_second")) {
    // The whole fabric's capex over this job's tokens/s; a job on part of the fabric also gets its GPUs' share.
    const double per = o["cost"]["network_capex_usd_per_token_per_second"].get<double>();
    const auto& par = o["parallelism"];
    const int64_t gpus = par.value("gpus", int64_t{0}), fabric = par.value("fabric_gpus", int64_t{0});
    std::string text =
        "$" + fixed(per, 2) +
        fmt::format(" (the whole fabric's ${}", thousands(std::llround(o["cost"]["network_capex_usd"].get<double>())));
    if (gpus > 0 && fabric > gpus)
      text += fmt::format("; this job's {} of {} GPUs: ${}", thousands(gpus), thousands(fabric),
                          fixed(per * static_cast<double>(gpus) / static_cast<double>(fabric), 2));
    t.add({"network capex per token/s", text + ")"});
  }
  if (o["tokens_budget"].is_null() || o["days_to_train"].is_null()) {
    t.add({"days to train", "-"});
  } else {
    const double tokens = o["tokens_budget"].get<double>();
    const std::string budget = tokens >= 1e12  ? fixed(tokens / 1e12, 2) + "T"
                               : tokens >= 1e9 ? fixed(tokens / 1e9, 1) + "B"
                               : tokens >= 1e6 ? fixed(tokens / 1e6, 1) + "M"
                                               : fixed(tokens, 0);
    t.add({"days to train",
           days_open(o["days_to_train"].get<double>()) + fmt::format("{} tokens, failure-free)", budget)});
    // The figure a planner of a large cluster needs, beside the failure-free one (its terms are below the table).
    if (o.contains("reliability") && o["reliability"].contains("days_to_train_with_failures") &&
        !o["reliability"]["days_to_train_with_failures"].is_null())
      t.add({"days to train with random failures",
             fmt::format("{}goodput {}%, details below)",
                         days_open(o["reliability"]["days_to_train_with_failures"].get<double>()),
                         fixed(100 * o["reliability"]["goodput"].get<double>(), 2))});
  }
  // A data loader that falls behind (frontend:) stalls the GPUs: the figures above leave it out, these add it.
  if (o.contains("data_loading") && !o["data_loading"]["keeps_up"].get<bool>() && it > 0) {
    const double stall = o["data_loading"]["stall_ms"].get<double>();
    t.add({"WAITING FOR DATA (the loader falls behind)", fixed(stall, 2) + " ms per iteration"});
    t.add({"  iteration with the wait",
           fmt::format("{} ms ({}% longer)", fixed(it + stall, 2), fixed(100 * stall / it, 1))});
    if (!o["days_to_train"].is_null())
      t.add({"  days to train with the wait", fixed(o["days_to_train"].get<double>() * (it + stall) / it, 1)});
  }
  t.add({"ideal bubble (p-1)/(v m) of compute, even stages", num(o["ideal_bubble_fraction"], 1, 100, "%")});
  if (o.contains("memory_gbyte")) {
    const auto& mm = o["memory_gbyte"];
    t.add({"memory per GPU",
           // The datasheet's "80GB" is 80 GiB (workload/model.cpp): named beside its 85.9 GB.
           fmt::format("{:.1f} GB of {:.1f} GB ({:.0f} GiB){} (stage {}, the fullest)", mm["total"].get<double>(),
                       mm["hbm"].get<double>(), mm["hbm"].get<double>() * 1e9 / 1073741824.0,
                       mm["fits"].get<bool>() ? "" : ": DOES NOT FIT", mm["stage"].get<int64_t>())});
    t.add({"  weights / gradients / optimizer",
           fmt::format("{:.1f} / {:.1f} / {:.1f} GB", mm["weights"].get<double>(), mm["gradients"].get<double>(),
                       mm["optimizer"].get<double>())});
    t.add({"  activations", fmt::format("{:.1f} GB ({:.3f} GB per layer, {:.2f} microbatches in flight)",
                                        mm["activations"].get<double>(), mm["activation_per_layer"].get<double>(),
                                        mm["inflight_microbatches"].get<double>())});
    t.add({"  buffers", fmt::format("{:.1f} GB", mm["buffers"].get<double>())});
  }
  t.write(out, "  ");
  // What the parts mean (the document's definitions say it at length).
  if (!chakra && o.contains("critical_stage") && o["critical_stage"].is_number_integer() &&
      o["parallelism"]["pp"].get<int64_t>() > 1)
    out << fmt::format(
        "  (the time parts are stage {}'s, the critical stage: the last to finish. Exposed: communication "
        "it waits for, not hidden behind compute. Bubble: waiting for another stage.{})\n",
        o["critical_stage"].get<int64_t>(), [&] {
          // A lighter stage can finish last (stage 0 runs the last backward): say where the busiest stage's
          // parts are, and its compute and bubble (stage 0 of 405B holds 7 layers of 8: its bubble counts the
          // wait for the busier stages, not the pipeline's own).
          double most = 0;
          int64_t busiest = 0, at = 0;
          for (const auto& s : o["stages_ms"]) {
            if (s["compute"].get<double>() > most) {
              most = s["compute"].get<double>();
              busiest = at;
            }
            ++at;
          }
          if (most <= o["breakdown_ms"]["compute"].get<double>() * (1 + 1e-9)) return std::string();
          const auto& b = o["stages_ms"][static_cast<size_t>(busiest)];
          const double it = o["iteration_time_ms"].get<double>();
          // Uneven stages, not the schedule, then make the bubble: said beside the ideal one (25.9 % against an
          // ideal 1.8 % read as a contradiction).
          const double mine = o["breakdown_ms"]["compute"].get<double>();
          const std::string uneven =
              o.contains("ideal_bubble_fraction") && o["ideal_bubble_fraction"].is_number() && mine > 0
                  ? fmt::format(" It computes {:.0f}% more than stage {}, and the others wait for it: hence a bubble "
                                "above the ideal {} of even stages.",
                                100 * (most / mine - 1), o["critical_stage"].get<int64_t>(),
                                num(o["ideal_bubble_fraction"], 1, 100, "%"))  // as the table's row reads it
                  : std::string();
          return fmt::format(" The busiest stage, {}, computes {} ms ({:.1f}%) with a bubble of {} ms ({:.1f}%); "
                             "every stage's parts are in the per-stage table.{}",
                             busiest, fixed(most, 2), 100 * most / it, fixed(b["bubble"].get<double>(), 2),
                             100 * b["bubble"].get<double>() / it, uneven);
        }());
  else if (!chakra) out << "  (exposed: communication the step waits for, not hidden behind compute)\n";
  if (!chakra && !o["mfu"].is_null())
    out << "  (MFU: the model's FLOPs, 6 x matmul parameters (LM head too) x tokens plus attention's 12 x layers x "
           "hidden x seq per token, over the GPUs' dense BF16 peak)\n";
  if (chakra) {
    const auto& c = o["chakra"];
    out << fmt::format("\n  plan {} transfers; per communicator (per iteration; exposed = on the critical rank {}, "
                       "not overlapped with its compute):\n",
                       thousands(o["plan"]["transfers"].get<int64_t>()), c["critical_rank"].get<int64_t>());
    Table ct({"communicator", "ranks", "ops", "bytes", "exposed (ms)"});
    for (const auto& g : c["traffic"])
      ct.add({g["group"].get<std::string>(), std::to_string(g["ranks"].get<int64_t>()),
              thousands(g["ops"].get<int64_t>()), thousands(static_cast<int64_t>(g["bytes"].get<double>())),
              fixed(g["exposed_ms"].get<double>(), 3)});
    ct.write(out, "    ");
    const auto& rows = o["stages_ms"];
    if (rows.size() > 1) {
      constexpr size_t kShown = 64;
      out << "\n  per rank (ms; the critical rank is marked *):\n";
      Table rt({"rank", "compute", "collective", "p2p", "idle"});
      const int64_t crit = c["critical_rank"].get<int64_t>();
      for (size_t k = 0; k < rows.size() && k < kShown; ++k) {
        const auto& row = rows[k];
        const int64_t rk = row["rank"].get<int64_t>();
        rt.add({std::to_string(rk) + (rk == crit ? "*" : ""), fixed(row["compute"].get<double>(), 3),
                fixed(row["collective"].get<double>(), 3), fixed(row["p2p"].get<double>(), 3),
                fixed(row["idle"].get<double>(), 3)});
      }
      rt.write(out, "    ");
      if (rows.size() > kShown) out << fmt::format("    ... {} more ranks in the JSON output\n", rows.size() - kShown);
    }
    return;
  }
  const auto& g = o["groups"];
  // With CP the gradients are reduced over DP x CP ranks (Job::replicas): that group is named so.
  const bool with_cp = par.contains("cp") && par["cp"].get<int64_t>() > 1;
  out << fmt::format("\n  communicator groups: TP {} x {} GPUs, PP {} x {}, {} {} x {}",
                     thousands(g["tp"]["count"].get<int64_t>()), thousands(g["tp"]["size"].get<int64_t>()),
                     thousands(g["pp"]["count"].get<int64_t>()), thousands(g["pp"]["size"].get<int64_t>()),
                     with_cp ? "DP x CP (gradients)" : "DP", thousands(g["dp"]["count"].get<int64_t>()),
                     thousands(g["dp"]["size"].get<int64_t>()));
  if (g["ep"]["count"].get<int64_t>() > 0)
    out << fmt::format(", EP {} x {}, EDP {} x {}", thousands(g["ep"]["count"].get<int64_t>()),
                       thousands(g["ep"]["size"].get<int64_t>()), thousands(g["edp"]["count"].get<int64_t>()),
                       thousands(g["edp"]["size"].get<int64_t>()));
  out << "\n";
  const auto& v = o["volumes"];
  if (!v["tp_bytes_per_gpu"].is_null())
    out << fmt::format(
        "  per GPU per iteration: TP {:.2f} GB, PP {:.2f} GB, DP {:.2f} GB, EP {:.2f} GB, CP {:.2f} GB\n",
        v["tp_bytes_per_gpu"].get<double>() / 1e9, v["pp_bytes_per_gpu"].get<double>() / 1e9,
        v["dp_bytes_per_gpu"].get<double>() / 1e9, v["ep_bytes_per_gpu"].get<double>() / 1e9,
        v["cp_bytes_per_gpu"].get<double>() / 1e9);
  const auto& tm = o["timings"];
  if (tm["tp_collective_us"].is_null() || (o.contains("parallelism") && o["parallelism"]["tp"].is_number_integer() &&
                                           o["parallelism"]["tp"].get<int64_t>() == 1))  // no TP collective to time
    out << fmt::format("  DP buckets {} per group; plan {} transfers\n",
                       o["plan"]["dp_buckets_per_group"].get<int64_t>(),
                       thousands(o["plan"]["transfers"].get<int64_t>()));
  else
    out << fmt::format("  one TP {} {} us; DP buckets {} per group (at most {} params each); plan {} transfers\n",
                       o.contains("parallelism") && o["parallelism"].value("sequence_parallel", false)
                           ? "reduce-scatter + all-gather (SP)"
                           : "all-reduce",
                       fixed(tm["tp_collective_us"].get<double>(), 1), o["plan"]["dp_buckets_per_group"].get<int64_t>(),
                       thousands(o["plan"]["bucket_params"].get<int64_t>()),
                       thousands(o["plan"]["transfers"].get<int64_t>()));
  if (const std::string list = dp_choices_text(o); !list.empty()) {
    out << fmt::format("  DP collectives simulated per iteration, all groups: {}\n", list);
    const auto& par = o["parallelism"];
    if (par.value("overlap_param_gather", false) && (par["zero"] == 1 || par["zero"] == 2))
      out << "    (workload.overlap_param_gather: a group's first parameter all-gather, which the next forward waits "
             "for, is simulated; the others run behind that forward)\n";
  }
  // The policy, and when it placed the ranks as packed would (rank r on GPU r), that it did: the default's name
  // promises more than the numbering gives on some fabrics.
  const auto policy_text = [](const nlohmann::json& p) {
    return p["policy"].get<std::string>() +
           (p.value("same_as_packed", false) ? " (here the same as packed: rank r on GPU r)" : "");
  };
  if (o.contains("placement") && o["placement"].value("torus_cubes", false)) {
    const auto& p = o["placement"];
    out << fmt::format(
        "  placement {}: {} torus cube(s); DP+PP bytes crossing cubes {:.1f}% (DP {:.1f}%, PP {:.1f}%)\n",
        policy_text(p), p["groups_used"].get<int64_t>(), 100 * p["cross_spine_fraction"].get<double>(),
        100 * p["dp_cross_spine_fraction"].get<double>(), 100 * p["pp_cross_spine_fraction"].get<double>());
  } else if (o.contains("placement") && o["placement"]["cross_spine_fraction"].is_null()) {
    const auto& p = o["placement"];
    const int64_t groups = p["groups_used"].get<int64_t>(), pods = p["pods_used"].get<int64_t>();
    out << fmt::format("  placement {}: {} aggregation group{}, {} pod{} (the import gives no model sizes to count "
                       "the bytes crossing the spine)\n",
                       policy_text(p), thousands(groups), groups == 1 ? "" : "s", thousands(pods),
                       pods == 1 ? "" : "s");
  } else if (o.contains("placement")) {
    const auto& p = o["placement"];
    const int64_t groups = p["groups_used"].get<int64_t>(), pods = p["pods_used"].get<int64_t>();
    // A tier the fabric does not have is not named (a two-tier fabric has no super-spine).
    const bool super_spine = !o.contains("network") || o["network"]["switch_tiers"].get<int64_t>() >= 3;
    out << fmt::format("  placement {}: {} aggregation group{}, {} pod{}; DP+PP bytes crossing the spine {:.1f}%{}{} "
                       "(DP {:.1f}%, PP {:.1f}% cross the spine)\n",
                       policy_text(p), thousands(groups), groups == 1 ? "" : "s", thousands(pods), pods == 1 ? "" : "s",
                       100 * p["cross_spine_fraction"].get<double>(),
                       super_spine ? fmt::format(", the super-spine {:.1f}%",
                                                 100 * p["cross_super_spine_fraction"].get<double>())
                                   : std::string(),
                       p.contains("cross_core_fraction")
                           ? fmt::format(", the core {:.1f}%", 100 * p["cross_core_fraction"].get<double>())
                           : std::string(),
                       100 * p["dp_cross_spine_fraction"].get<double>(),
                       100 * p["pp_cross_spine_fraction"].get<double>());
    if (p.contains("ep_servers_per_group")) {
      const int64_t servers = p["ep_servers_per_group"].get<int64_t>();
      out << fmt::format("  EP groups of {} GPUs: {}; {:.1f}% of EP bytes cross the spine\n",
                         o["parallelism"]["ep"].get<int64_t>(),
                         servers == 1 ? std::string("each inside one server (NVLink)")
                                      : fmt::format("each across up to {} servers", servers),
                         100 * p["ep_cross_spine_fraction"].get<double>());
    }
  }
  if (o.contains("imported")) {
    out << "\n  imported from " << o["imported"]["source"].get<std::string>()
        << " (per iteration, per GPU; blocking = time added to a stage's passes):\n";
    Table it({"group", "collectives", "bytes", "blocking (ms)"});
    for (const auto& g : o["imported"]["traffic"])
      it.add({g["group"].get<std::string>(), thousands(g["collectives"].get<int64_t>()),
              thousands(static_cast<int64_t>(g["bytes"].get<double>())), fixed(g["blocking_ms"].get<double>(), 3)});
    it.write(out, "    ");
  }
  if (o["stages_ms"].size() > 1) {
    out << "\n  per stage (ms; the critical stage is marked *):\n";
    Table s({"stage", "layers", "compute", "tp", "pp", "dp", "ep", "cp", "bubble"});
    const int64_t crit = o["critical_stage"].get<int64_t>();
    for (const auto& row : o["stages_ms"]) {
      const int64_t st = row["stage"].get<int64_t>();
      const auto& sl = o["parallelism"]["stage_layers"];
      s.add({std::to_string(st) + (st == crit ? "*" : ""),
             static_cast<size_t>(st) < sl.size() ? std::to_string(sl[static_cast<size_t>(st)].get<int64_t>()) : "-",
             fixed(row["compute"].get<double>(), 2), fixed(row["tp"].get<double>(), 2),
             fixed(row["pp"].get<double>(), 2), fixed(row["dp"].get<double>(), 2), fixed(row["ep"].get<double>(), 2),
             fixed(row["cp"].get<double>(), 2), fixed(row["bubble"].get<double>(), 2)});
    }
    s.write(out, "    ");
  }
  if (o.contains("sweep")) {
    out << "\n";
    write_sweep_table(o, out);
  }
}

namespace {

// Trace times (write_training_trace alone). A slice's end points are rounded
// to whole nanoseconds, and its duration is the difference of the rounded end
// points, so two slices that touch in simulated time touch in the trace
// (rounding ts and dur separately made ~1 in 100 slices start 1 ns before
// their predecessor ended, which Perfetto reports as overlapping and drops).
int64_t trace_ns(Time t) { return (t.ps + 500) / 1000; }  // round half up; trace times are >= 0

// `ns` as the microseconds number of the trace-event format. Perfetto's JSON
// importer reads a number as int64(us * 1000.0), truncating
// (src/trace_processor/importers/json/json_utils.cc, CoerceToTs, in
// google/perfetto), and the double nearest to e.g. 8465964.065 is a hair
// below it, so it would read 8465964064 ns. Step up to the next double until
// the truncation gives `ns` back (at most a few ulps: the number printed may
// then carry more digits, 8465964.065000001, and still means `ns`).
double trace_us(int64_t ns) {
  double us = static_cast<double>(ns) / 1000.0;
  while (static_cast<int64_t>(us * 1000.0) < ns) us = std::nextafter(us, std::numeric_limits<double>::infinity());
  return us;
}

}  // namespace

void write_training_trace(const workload::TrainResult& r, std::ostream& out) {
  nlohmann::json events = nlohmann::json::array();
  for (size_t s = 0; s < r.stages.size(); ++s) {
    events.push_back({{"name", "process_name"},
                      {"ph", "M"},
                      {"pid", s},
                      {"args", {{"name", fmt::format("{} {}", r.trace_process, s)}}}});
    events.push_back({{"name", "process_sort_index"}, {"ph", "M"}, {"pid", s}, {"args", {{"sort_index", s}}}});
    for (size_t l = 0; l < r.trace_lanes.size(); ++l)
      events.push_back(
          {{"name", "thread_name"}, {"ph", "M"}, {"pid", s}, {"tid", l}, {"args", {{"name", r.trace_lanes[l]}}}});
  }
  // Slices in time order and, at one start, the longer first: on one track (a lane of a stage) the channels of
  // one collective start together and end apart, and Perfetto nests slices in file order at equal times, so a
  // longer channel after a shorter one was improperly nested and dropped (20 of the default job's trace). The
  // longer one first holds the shorter ones inside it.
  std::vector<size_t> order(r.trace.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const int64_t sa = trace_ns(r.trace[a].start), sb = trace_ns(r.trace[b].start);
    if (sa != sb) return sa < sb;
    const int64_t da = trace_ns(r.trace[a].start + r.trace[a].dur) - sa;
    const int64_t db = trace_ns(r.trace[b].start + r.trace[b].dur) - sb;
    return da > db;
  });
  for (size_t k : order) {
    const workload::TraceOp& e = r.trace[k];
    const int64_t start = trace_ns(e.start);
    const int64_t end = trace_ns(e.start + e.dur);
    const std::string lane = e.tid >= 0 && static_cast<size_t>(e.tid) < r.trace_lanes.size()
                                 ? r.trace_lanes[static_cast<size_t>(e.tid)]
                                 : fmt::format("lane {}", e.tid);
    nlohmann::json args = {{"kind", e.kind}, {"group", fmt::format("{} {}/{}", r.trace_process, e.pid, lane)}};
    if (std::string_view(e.kind) != "compute") {
      args["bytes"] = e.bytes;
      args["peers"] = e.peers;
      args["channel"] = e.channel;
    }
    events.push_back({{"name", e.name},
                      {"cat", e.cat},
                      {"ph", "X"},
                      {"pid", e.pid},
                      {"tid", e.tid},
                      {"ts", trace_us(start)},
                      {"dur", trace_us(end - start)},
                      {"args", std::move(args)}});
  }
  // Flow arrows (the trace-event format's flow events): "s" at the middle of the sending slice, "f" with
  // binding point "e" (its enclosing slice) at the middle of the receiving slice, never before the "s".
  auto mid = [](const workload::TraceOp& e) {
    const int64_t a = trace_ns(e.start), b = trace_ns(e.start + e.dur);
    return a + (b - a) / 2;
  };
  for (size_t k = 0; k < r.trace_flows.size(); ++k) {
    const auto& from = r.trace[static_cast<size_t>(r.trace_flows[k].first)];
    const auto& to = r.trace[static_cast<size_t>(r.trace_flows[k].second)];
    const int64_t s_ns = mid(from), f_ns = std::max(s_ns, mid(to));
    events.push_back({{"name", "send"},
                      {"cat", "flow"},
                      {"ph", "s"},
                      {"id", k + 1},
                      {"pid", from.pid},
                      {"tid", from.tid},
                      {"ts", trace_us(s_ns)}});
    events.push_back({{"name", "send"},
                      {"cat", "flow"},
                      {"ph", "f"},
                      {"bp", "e"},
                      {"id", k + 1},
                      {"pid", to.pid},
                      {"tid", to.tid},
                      {"ts", trace_us(f_ns)}});
  }
  // Counter tracks: one per link, in a process of their own after the stages (ranks).
  if (!r.trace_counters.empty()) {
    const size_t pid = r.stages.size();
    events.push_back({{"name", "process_name"},
                      {"ph", "M"},
                      {"pid", pid},
                      {"args", {{"name", "links: payload utilization (flow engine)"}}}});
    events.push_back({{"name", "process_sort_index"}, {"ph", "M"}, {"pid", pid}, {"args", {{"sort_index", pid}}}});
    for (const auto& c : r.trace_counters)
      for (const auto& [at, v] : c.steps)
        events.push_back({{"name", c.name},
                          {"ph", "C"},
                          {"pid", pid},
                          {"ts", trace_us(trace_ns(at))},
                          {"args", {{"utilization", round_to(v, 6)}}}});
  }
  nlohmann::json doc = {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
  out << doc.dump() << "\n";
}

void add_imported(nlohmann::json& o, const std::string& source, const std::vector<workload::simai::GroupTraffic>& t) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& g : t)
    rows.push_back({{"group", g.group},
                    {"collectives", g.collectives},
                    {"bytes", round_to(g.bytes, 0)},
                    {"blocking_ms", ms(g.blocking)}});
  o["imported"] = {{"source", source}, {"traffic", rows}};
}

void add_chakra(nlohmann::json& o, const std::string& source, const workload::chakra::Imported& im) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& g : im.traffic)
    rows.push_back({{"group", g.group},
                    {"ranks", g.ranks},
                    {"ops", g.collectives},
                    {"bytes", round_to(g.bytes, 0)},
                    {"exposed_ms", ms(g.exposed)}});
  o["chakra"] = {{"source", source},
                 {"ranks", im.ranks},
                 {"version", im.version},
                 {"nodes", im.nodes},
                 {"skipped_nodes", im.skipped},
                 {"collectives", im.collectives},
                 {"p2p_pairs", im.p2p_pairs},
                 {"critical_rank", im.critical_rank},
                 {"traffic", rows}};
  // The trace's own breakdown replaces the training one: which parallelism a communicator serves (tp, pp,
  // dp, ep, cp) and the pipeline bubble are not in a trace.
  auto rank_json = [](const workload::chakra::RankBreakdown& b) {
    return nlohmann::json{{"compute", ms(b.compute)},
                          {"collective", ms(b.collective)},
                          {"p2p", ms(b.p2p)},
                          {"idle", ms(b.idle)}};
  };
  if (!im.per_rank.empty()) o["breakdown_ms"] = rank_json(im.per_rank[static_cast<size_t>(im.critical_rank)]);
  nlohmann::json ranks = nlohmann::json::array();
  for (size_t k = 0; k < im.per_rank.size(); ++k) {
    nlohmann::json row = rank_json(im.per_rank[k]);
    row["rank"] = k;
    ranks.push_back(row);
  }
  o["stages_ms"] = ranks;
  o["critical_stage"] = nullptr;
  o["ideal_bubble_fraction"] = nullptr;
  for (const char* k : {"tp", "cp", "pp", "dp", "ep", "interleave", "sequence_parallel", "zero", "recompute"})
    o["parallelism"][k] = nullptr;
  o["batch"]["microbatches_per_pipeline"] = nullptr;
  o["groups"] = nullptr;
  o["plan"]["dp_buckets_per_group"] = nullptr;
  o["plan"]["dp_collectives"] = im.collectives;
  o["plan"]["p2p_transfers"] = im.p2p_pairs;
}

void add_sweep(nlohmann::json& o, const std::vector<study::ScalingPoint>& points) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& p : points)
    rows.push_back({{"cap_gbytes_per_second", round_to(p.cap_bytes_per_second / 1e9, 3)},
                    {"dp", p.dp},
                    {"gpus", p.gpus},
                    {"global_batch", p.global_batch},
                    {"iteration_time_ms", ms(p.iteration)},
                    {"tokens_per_second", round_to(p.tokens_per_second, 1)},
                    {"speedup", round_to(p.speedup, 6)},
                    {"ideal", round_to(p.ideal, 6)},
                    {"efficiency", round_to(p.efficiency, 6)},
                    {"mfu", round_to(p.mfu, 6)},
                    {"memory_gbyte", round_to(p.memory_bytes / 1e9, 3)},
                    {"fits", p.fits},
                    {"breakdown_ms", breakdown_json(p.breakdown)}});
  o["sweep"] = rows;
}

void write_sweep_table(const nlohmann::json& o, std::ostream& out) {
  out << "  scaling (weak: fixed work per replica, global batch grows with DP; speed-up vs the smallest DP):\n";
  // DP's exposed time, and every other communication part some row exposes (an MoE job's EP all-to-all is what a
  // NIC cap acts on most).
  std::vector<std::string> parts = {"dp"}, header = {"NIC cap",  "DP",       "GPUs",  "iteration (ms)",
                                                     "tokens/s", "speed-up", "ideal", "efficiency"};
  for (const char* p : {"tp", "pp", "ep", "cp"})
    for (const auto& r : o["sweep"])
      if (r["breakdown_ms"].value(p, 0.0) > 0) {
        parts.push_back(p);
        break;
      }
  for (const auto& p : parts) {
    std::string name = p;
    for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    header.push_back(name + " exposed (ms)");
  }
  Table t(header);
  // A DP too small to shard the optimizer's states enough does not fit in the GPU's memory: marked, and said below.
  std::vector<std::string> unfit;
  for (const auto& r : o["sweep"]) {
    const double cap = r["cap_gbytes_per_second"].get<double>();
    const bool fits = r.value("fits", true);
    const std::string dp = std::to_string(r["dp"].get<int64_t>());
    if (!fits && std::find(unfit.begin(), unfit.end(), dp) == unfit.end()) unfit.push_back(dp);
    // In GB/s (bytes, as the traffic), with the line rate in Gb/s beside it (as the scenario's nic_speed).
    std::vector<std::string> row = {cap > 0 ? fmt::format("{} GB/s ({} Gbps)", fixed(cap, 0), fixed(8 * cap, 0))
                                            : "as built",
                                    fits ? dp : dp + " *",
                                    thousands(r["gpus"].get<int64_t>()),
                                    fixed(r["iteration_time_ms"].get<double>(), 2),
                                    thousands(std::llround(r["tokens_per_second"].get<double>())),
                                    fixed(r["speedup"].get<double>(), 2),
                                    fixed(r["ideal"].get<double>(), 0),
                                    fixed(100 * r["efficiency"].get<double>(), 1) + "%"};
    for (const auto& p : parts) row.push_back(fixed(r["breakdown_ms"].value(p, 0.0), 2));
    t.add(row);
  }
  t.write(out, "    ");
  if (!unfit.empty()) {
    double need = 0;
    for (const auto& r : o["sweep"])
      if (!r.value("fits", true)) need = std::max(need, r.value("memory_gbyte", 0.0));
    out << fmt::format(
        "    * does not fit in the GPU's memory (DP {}: up to {} GB per GPU; the fewer the replicas, the "
        "less ZeRO shards the optimizer's states): a what-if, timed as if it fit; speed-ups against it "
        "are not ones a cluster could run\n",
        fmt::join(unfit, ", "), fixed(need, 1));
  }
  // A cap only lowers the NICs' speed: one at or above it is the fabric as built.
  if (o.contains("network") && o["network"]["nics_per_server"].get<int64_t>() > 0) {
    const double nic = o["network"]["nic_gbyte_per_s"].get<double>();
    double lowest_idle = 0;
    for (const auto& r : o["sweep"])
      if (const double cap = r["cap_gbytes_per_second"].get<double>();
          cap >= nic * (1 - 1e-9) && (lowest_idle == 0 || cap < lowest_idle))
        lowest_idle = cap;
    if (lowest_idle > 0)
      out << fmt::format("    a NIC cap of {} GB/s or more changes nothing: the NICs run at {} ({} GB/s) as built, "
                         "and a cap only lowers that; for faster NICs set server.nic_speed and switch.port_speed\n",
                         fixed(lowest_idle, 0), o["network"]["nic_speed"].get<std::string>(), format_number(nic, 4));
  }
  // An efficiency above 100% is no rounding error: the larger DP's iteration is shorter than the base's. Per cap,
  // the first row is the base. With ZeRO each GPU's optimizer step updates 1/dp of its stage's weights, so the
  // step shrinks as DP grows: work weak scaling does not hold fixed per replica.
  const int64_t zero =
      o.contains("parallelism") && o["parallelism"].contains("zero") ? o["parallelism"]["zero"].get<int64_t>() : 0;
  const nlohmann::json* base = nullptr;
  for (const auto& r : o["sweep"]) {
    if (!base || (*base)["cap_gbytes_per_second"] != r["cap_gbytes_per_second"]) base = &r;
    if (r["efficiency"].get<double>() <= 1.0005) continue;
    const double t0 = (*base)["iteration_time_ms"].get<double>(), t = r["iteration_time_ms"].get<double>();
    // The parts of the iteration that shrank most, from the two breakdowns (they add up to each iteration): the
    // pipeline's bubble when the critical stage moved, the optimizer step under ZeRO, ...
    std::vector<std::pair<double, std::string>> shrank;
    const auto& b0 = (*base)["breakdown_ms"];
    const auto& b1 = r["breakdown_ms"];
    for (const char* part : kTrainingParts)
      if (b0.contains(part) && b1.contains(part) && b0[part].is_number() && b1[part].is_number()) {
        const double dlt = b1[part].get<double>() - b0[part].get<double>();
        if (dlt < -0.005) shrank.emplace_back(dlt, part);
      }
    std::sort(shrank.begin(), shrank.end());
    std::string parts;
    for (size_t k = 0; k < std::min<size_t>(3, shrank.size()); ++k)
      parts += fmt::format("{}{} {} ms", k ? ", " : "", breakdown_label(shrank[k].second), fixed(shrank[k].first, 2));
    const bool optimizer_first = !shrank.empty() && shrank.front().second == "optimizer";
    out << fmt::format("    efficiency above 100% (DP {}: {}%): its iteration, {} ms, is shorter than DP {}'s, {} ms, "
                       "though it adds {} ms of exposed DP communication{}{}\n",
                       r["dp"].get<int64_t>(), fixed(100 * r["efficiency"].get<double>(), 1), fixed(t, 2),
                       (*base)["dp"].get<int64_t>(), fixed(t0, 2), fixed(b1["dp"].get<double>(), 2),
                       parts.empty() ? "" : "; what shrank: " + parts,
                       zero >= 1 && optimizer_first ? fmt::format(" (with ZeRO-{} each GPU's optimizer step updates "
                                                                  "1/dp of its stage's weights)",
                                                                  zero)
                       : !optimizer_first && !shrank.empty()
                           ? " (the same work per replica, timed on a larger fabric: the flows of the pipeline and "
                             "the other replicas meet differently)"
                           : "");
    break;  // once: the first such point says why
  }
}

nlohmann::json training_reliability_json(const study::TrainingReliability& r) {
  auto finite = [](double v, int digits) {
    return std::isfinite(v) ? nlohmann::json(round_to(v, digits)) : nlohmann::json(nullptr);
  };
  nlohmann::json j = {{"mtbi_hours", finite(r.mtbi_hours, 4)},
                      {"checkpoint_interval_minutes", finite(r.checkpoint_interval_hours * 60, 2)},
                      {"checkpoint_cost_minutes", round_to(r.checkpoint_cost_hours * 60, 6)},
                      {"restart_cost_minutes", round_to(r.restart_cost_hours * 60, 3)},
                      {"goodput", round_to(r.goodput, 6)},
                      {"days_to_train_with_failures", finite(r.days_to_train, 3)}};
  if (r.checkpoint_io) j["checkpoint_storage"] = checkpoint_io_json(*r.checkpoint_io);
  return j;
}

void write_training_reliability(const nlohmann::json& rel, std::ostream& out, const nlohmann::json* parallelism) {
  if (rel["days_to_train_with_failures"].is_null()) {
    out << "\n  with random failures: nothing in the risk model interrupts this job\n";
    return;
  }
  std::string details = "podnet reliability";
  if (parallelism && parallelism->contains("gpus") && parallelism->contains("fabric_gpus") &&
      (*parallelism)["gpus"].get<int64_t>() < (*parallelism)["fabric_gpus"].get<int64_t>())
    details += fmt::format(" --set reliability.job_gpus={}", (*parallelism)["gpus"].get<int64_t>());
  const double days = rel["days_to_train_with_failures"].get<double>();
  // The interval in the unit the interruptions are in (665.1 min read beside "every 11.08 h").
  out << fmt::format("\n  with random failures: {} to train (an interruption every {}; checkpoint every {} "
                     "at {} each, restart {} min: goodput {}%; details: {})\n",
                     under_a_day(days) ? duration_text(days * 24) : fixed_or_exp(days, 1) + " days",
                     duration_text(rel["mtbi_hours"].get<double>()),
                     duration_text(rel["checkpoint_interval_minutes"].get<double>() / 60),
                     checkpoint_minutes_text(rel["checkpoint_cost_minutes"].get<double>()),
                     fixed(rel["restart_cost_minutes"].get<double>(), 1), fixed(100 * rel["goodput"].get<double>(), 2),
                     details);
  // Most of a low goodput is the checkpoint's and the restart's cost against the interruptions: say which keys set
  // them (a 131,072-GPU job on the defaults keeps 29 %; the same minutes do not grow with the job).
  // Under 80 % the defaults (5 and 10 min) are worth a look: a job with fast checkpoints and restarts keeps 90 %.
  if (rel["goodput"].get<double>() < 0.8 && !rel.contains("checkpoint_storage"))
    out << fmt::format("  (goodput under {}%: each interruption costs a {} min restart and the lost work since the "
                       "last checkpoint, and each checkpoint {}; these are assumptions: reliability.restart_cost and "
                       "reliability.checkpoint_cost set them, or "
                       "storage nodes on a frontend (frontend.storage_nodes) time the checkpoint on that network)\n",
                       rel["goodput"].get<double>() < 0.5 ? 50 : 80,
                       fixed(rel["restart_cost_minutes"].get<double>(), 1),
                       checkpoint_minutes_text(rel["checkpoint_cost_minutes"].get<double>()));
  if (rel.contains("checkpoint_storage")) out << "  (" << checkpoint_io_text(rel["checkpoint_storage"]) << ")\n";
  const double ckpt_min = rel["checkpoint_cost_minutes"].get<double>(),
               restart_min = rel["restart_cost_minutes"].get<double>();
  if (reliability::beyond_model(ckpt_min / 60, restart_min / 60, rel["mtbi_hours"].get<double>()))
    out << fmt::format("  (out of the checkpoint model's range: an interruption every {} is less than a "
                       "checkpoint ({} min) and a restart ({} min) take together; the days above only say how far out "
                       "of range the job is)\n",
                       duration_text(rel["mtbi_hours"].get<double>()), fixed(ckpt_min, 1), fixed(restart_min, 1));
}

nlohmann::json data_loading_json(const study::DataLoading& d, Time iteration) {
  const double read_ms = d.read.seconds * 1e3;
  const double iteration_ms = iteration.seconds() * 1e3;
  return {{"bytes_per_iteration", round_to(d.bytes, 0)},
          {"sample_bytes", round_to(d.sample_bytes, 0)},
          {"servers", d.servers},
          {"flows", d.flows},
          {"engine", d.engine},
          {"routing", d.routing},
          {"read_ms", round_to(read_ms, 6)},
          {"gbyte_per_s", round_to(d.read.gbyte_per_s, 6)},
          {"bound", d.read.bound},
          {"iteration_ms", round_to(iteration_ms, 6)},
          {"share_of_iteration", round_to(iteration_ms > 0 ? read_ms / iteration_ms : 0, 6)},
          {"keeps_up", read_ms <= iteration_ms},
          {"stall_ms", round_to(std::max(0.0, read_ms - iteration_ms), 6)}};
}

void write_data_loading(const nlohmann::json& d, std::ostream& out) {
  // Decimal units, three significant figures: 32.8 KB, 134 MB, 16.4 GB.
  const auto size = [](double b) {
    static constexpr std::pair<double, const char*> units[] = {{1e12, "TB"}, {1e9, "GB"}, {1e6, "MB"}, {1e3, "KB"}};
    for (const auto& [f, u] : units)
      if (b >= f) return fixed(b / f, b / f < 10 ? 2 : b / f < 100 ? 1 : 0) + " " + u;
    return fixed(b, 0) + " B";
  };
  out << fmt::format("\n  data loading: {} per iteration ({} per sample) read by {} servers from the storage nodes in "
                     "{} ms at {} GB/s ({} bound it; {} engine, {} routing, {} flows)\n",
                     size(d["bytes_per_iteration"].get<double>()), size(d["sample_bytes"].get<double>()),
                     thousands(d["servers"].get<int64_t>()), fixed(d["read_ms"].get<double>(), 2),
                     fixed(d["gbyte_per_s"].get<double>(), 1), d["bound"].get<std::string>(),
                     d["engine"].get<std::string>(), d["routing"].get<std::string>(),
                     thousands(d["flows"].get<int64_t>()));
  if (d["keeps_up"].get<bool>())
    out << fmt::format("    the loader keeps up: its read takes {}% of the iteration and runs during the one before\n",
                       fixed(100 * d["share_of_iteration"].get<double>(), 1));
  else
    out << fmt::format("    the loader falls behind: the GPUs wait {} ms per iteration for data ({}% longer "
                       "iterations: the rows \"with the wait\" above add it)\n",
                       fixed(d["stall_ms"].get<double>(), 2),
                       fixed(100 * d["stall_ms"].get<double>() / d["iteration_ms"].get<double>(), 1));
}

nlohmann::json write_behind_json(const study::WriteBehindTraining& w) {
  return {{"bytes", round_to(w.bytes, 0)},
          {"flows", w.flows},
          {"engine", w.engine},
          {"iteration_alone_ms", round_to(w.iteration_alone_s * 1e3, 6)},
          {"iteration_ms", round_to(w.iteration_s * 1e3, 6)},
          {"slowdown", round_to(w.slowdown, 6)},
          {"write_alone_minutes", round_to(w.write_alone_s / 60, 6)},
          {"write_minutes", round_to(w.write_s / 60, 6)},
          {"outlasts_iteration", w.outlasts}};
}

void write_write_behind(const nlohmann::json& w, std::ostream& out) {
  const double slow = w["slowdown"].get<double>();
  out << fmt::format(
      "\n  asynchronous checkpoint on the back end (frontend.converged): {} GB written behind training over the "
      "links it uses ({} engine, {} flows)\n",
      fixed(w["bytes"].get<double>() / 1e9, 1), w["engine"].get<std::string>(), thousands(w["flows"].get<int64_t>()));
  out << fmt::format("    each iteration takes {} ms instead of {} ms while the write runs ({}% slower)\n",
                     fixed(w["iteration_ms"].get<double>(), 2), fixed(w["iteration_alone_ms"].get<double>(), 2),
                     fixed(100 * (slow - 1), 1));
  if (w["outlasts_iteration"].get<bool>())
    out << fmt::format("    its bytes move in {} behind training, {} on an idle back end (the save's overhead aside)\n",
                       checkpoint_minutes_text(w["write_minutes"].get<double>()),
                       checkpoint_minutes_text(w["write_alone_minutes"].get<double>()));
  else
    out << fmt::format("    its bytes move in {}, inside one iteration: started with it here, they meet only the "
                       "traffic of that start; they may meet more elsewhere in the step\n",
                       checkpoint_minutes_text(w["write_minutes"].get<double>()));
}

namespace {
// GPU ranks as ranges: {0, 1, 2, 3, 8} -> "0-3,8" (sorted input).
std::string gpu_ranges(const std::vector<int32_t>& g) {
  std::string out;
  for (size_t i = 0; i < g.size();) {
    size_t j = i;
    while (j + 1 < g.size() && g[j + 1] == g[j] + 1) ++j;
    out += (out.empty() ? "" : ",") + (j > i ? fmt::format("{}-{}", g[i], g[j]) : std::to_string(g[i]));
    i = j + 1;
  }
  return out;
}
// A long GPU list cut for the table (the JSON keeps it whole).
// A list of GPU ids ("17,145,273") as the table shows it: a space after each comma, so that it does not read as one
// number with thousands separators ("17, 145, 273"), cut to 34 characters.
std::string short_list(const std::string& s) {
  std::string spaced;
  for (const char c : s) {
    spaced += c;
    if (c == ',') spaced += ' ';
  }
  return spaced.size() <= 34 ? spaced : spaced.substr(0, 31) + "...";
}
// The GPUs of `slow` in a list of ranks and ranges ("56-63,184-191" as the straggler report writes them).
std::vector<int64_t> slow_among(const std::string& list, const std::vector<int64_t>& slow) {
  std::vector<int64_t> found;
  std::istringstream in(list);
  for (std::string item; std::getline(in, item, ',');) {
    const size_t dash = item.find('-');
    try {
      const int64_t lo = std::stoll(item.substr(0, dash));
      const int64_t hi = dash == std::string::npos ? lo : std::stoll(item.substr(dash + 1));
      for (const int64_t g : slow)
        if (g >= lo && g <= hi && std::find(found.begin(), found.end(), g) == found.end()) found.push_back(g);
    } catch (const std::exception&) {  // not a rank: nothing to find in it
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}
}  // namespace

namespace {

// A preset model without a published recipe (mixtral-8x7b): the memory, batch and budget keys the scenario leaves
// to podnet's defaults, with those defaults (full recompute and 300B tokens are podnet's, not the model's).
nlohmann::json no_recipe_defaults(const scenario::Scenario& sc, const workload::Job& j) {
  if (workload::find_recipe(j.model.name) || !workload::find_model(j.model.name)) return nullptr;
  std::map<std::string, std::string> defaults;
  for (const auto& spec : workload::workload_params()) defaults[spec.name] = spec.default_text;
  nlohmann::json keys = nlohmann::json::object();
  for (const auto& [group, names] : workload::recipe_groups()) {
    if (group == "layout") continue;  // the layout's defaults follow the GPUs (auto), and the report prints it
    for (const auto& k : names)
      if (!sc.given("workload." + k) && !defaults[k].empty()) keys[k] = defaults[k];
  }
  if (keys.empty()) return nullptr;
  return {{"model", j.model.name}, {"defaults_used", keys}};
}

// Where the model's recipe keys came from: the preset's published recipe, the scenario (file, fragment or
// --set), or podnet's defaults (null when the model has no published recipe or the workload is imported).
nlohmann::json recipe_json(const scenario::Scenario& sc, const workload::Job& j) {
  const workload::Recipe* r = workload::find_recipe(j.model.name);
  if (!r) return nullptr;
  // A workload key the scenario gives: its file, a fragment or --set.
  const auto in_scenario = [&](const std::string& k) {
    const std::string path = "workload." + k;
    return sc.lines.count(path) || sc.from_set.count(path) || sc.from_fragment.count(path);
  };
  nlohmann::json preset = nlohmann::json::array(), given = nlohmann::json::array(), defaulted = nlohmann::json::array();
  for (const auto& [group, keys] : workload::recipe_groups())
    for (const auto& k : keys) {
      if (sc.recipe_keys.count("workload." + k)) {
        preset.push_back(k);
      } else if (in_scenario(k)) {
        given.push_back(k);
      } else {
        defaulted.push_back(k);
      }
    }
  // A recipe group applies whole or not at all: one key of it given leaves the group's other keys to podnet's
  // defaults, not to the recipe (Scenario's apply_recipe). Which groups that hit, and the recipe values it lost.
  nlohmann::json not_applied = nlohmann::json::array();
  std::map<std::string, std::string> defaults;  // a recipe value equal to podnet's default is not lost
  for (const auto& spec : workload::workload_params()) defaults[spec.name] = spec.default_text;
  // Keys the recipe sets that the scenario gives instead (its tokens over the recipe's cited 15T).
  nlohmann::json over = nlohmann::json::array();
  for (const auto& g : r->groups)
    for (const auto& [k, text] : g.keys)
      if (in_scenario(k) && !sc.recipe_keys.count("workload." + k)) over.push_back(k);
  // A group applied although keys of it were given, at the recipe's own values: which, and what the recipe set.
  nlohmann::json kept = nlohmann::json::array();
  for (const auto& g : r->groups) {
    nlohmann::json given_keys = nlohmann::json::array(), lost = nlohmann::json::object(),
                   set_by_recipe = nlohmann::json::object();
    bool applied = false;
    for (const auto& [k, text] : g.keys) {
      applied = applied || sc.recipe_keys.count("workload." + k) > 0;
      if (in_scenario(k)) given_keys.push_back(k);
      else if (defaults[k] != text) lost[k] = text;
      if (sc.recipe_keys.count("workload." + k) && defaults[k] != text) set_by_recipe[k] = text;
    }
    if (applied && !given_keys.empty() && !set_by_recipe.empty())
      kept.push_back({{"group", g.name}, {"given", given_keys}, {"recipe_values_used", set_by_recipe}});
    if (applied || lost.empty()) continue;
    if (given_keys.empty())  // given through a key of the group the recipe does not set
      for (const auto& [group, keys] : workload::recipe_groups())
        if (group == g.name)
          for (const auto& k : keys)
            if (in_scenario(k)) given_keys.push_back(k);
    not_applied.push_back({{"group", g.name}, {"given", given_keys}, {"recipe_values_not_used", lost}});
  }
  return {{"model", r->model},
          {"source", r->source},
          {"from_preset", preset},
          {"from_scenario", given},
          {"from_defaults", defaulted},
          {"groups_not_applied", not_applied},
          {"groups_kept_at_recipe_values", kept},
          {"scenario_over_recipe", over},
          // the model came from --set but the scenario file gives recipe keys (written for another model?)
          {"model_from_command_line_over_file_keys", sc.recipe_keys_from_file()}};
}

}  // namespace

nlohmann::json train_document(const scenario::Setup& s, const study::TrainStudy& t) {
  nlohmann::json doc = new_document(context_of(s.scenario, "train"));
  add_training(doc, t.result);
  if (engine::engine_info(s.engine).traits.packet_faults)  // the packet engine: which one ran
    doc["packet_engine"] = s.network.packet.partitioned ? "partitioned" : "sequential";
  if (doc.contains("model") && doc["model"].is_object())
    if (nlohmann::json r = reshaped_keys(t.result.job.model); !r.empty()) doc["model"]["reshaped"] = r;
  {  // the network the job ran on, for the report's header
    topology::Hardware hw = s.scenario.hardware();
    // The NIC's and its PCIe link's rates as the fabric has them (a SimAI .topo gives its own, not the scenario's).
    if (const Bandwidth nic = study::nic_speed(s.fabric); nic.bps > 0) hw.nic_speed = nic;
    if (const Bandwidth pcie = study::nic_pcie_speed(s.fabric); pcie.bps > 0) hw.pcie_bw = pcie;
    doc["network"] = {{"family", s.fabric.family},
                      {"switch_tiers", static_cast<int64_t>(s.fabric.tier_names.size()) - 1},
                      {"nics_per_server", s.fabric.nics_per_server},
                      {"nic_speed", format_bandwidth(hw.nic_speed)},
                      {"nic_gbyte_per_s", round_to(hw.nic_speed.bytes_per_second() / 1e9, 6)},
                      {"pcie_gbyte_per_s", round_to(hw.pcie_bw.bytes_per_second() / 1e9, 6)},
                      {"rail_optimized", s.fabric.rail_optimized},
                      {"transport", s.network.transport.name}};
    if (s.fabric.nic_planes > 1) doc["network"]["nic_planes"] = s.fabric.nic_planes;
    if (engine::engine_info(s.engine).traits.packet_faults) {  // an engine that runs congestion control: which
      doc["network"]["cc"] = s.network.packet.cc == "auto" ? s.network.transport.default_cc : s.network.packet.cc;
      doc["network"]["pfc"] = s.network.packet.pfc;
      doc["network"]["routing"] = s.network.routing.policy;
    }
  }
  // What the fabric's network costs (design's capex, the whole fabric's: a job on part of it is charged all of
  // it, as the idle-GPU note says), and per token/s of this job: a sweep's figure for the cost of throughput.
  if (const nlohmann::json d = design_document(s.scenario, s.fabric, "design");
      d.contains("cost") && d["cost"].contains("capex_usd") && d["cost"]["capex_usd"].is_number()) {
    const double capex = d["cost"]["capex_usd"].get<double>();
    doc["cost"] = {{"network_capex_usd", round_to(capex, 2)}};
    if (doc["tokens_per_second"].is_number() && doc["tokens_per_second"].get<double>() > 0)
      doc["cost"]["network_capex_usd_per_token_per_second"] =
          round_to(capex / doc["tokens_per_second"].get<double>(), 6);
  }
  // The packet engine's counters over the iteration's runs, as bench reports them: what a congestion-control study
  // of real training traffic compares beside the time.
  if (t.telemetry.recorder && t.telemetry.recorder->packet_level()) {
    nlohmann::json c = packet_counters_json(*t.telemetry.recorder);
    c["runs"] = t.telemetry.recorder->runs();
    doc["packet_counters"] = c;
  }
  // workload.dp given (not auto): the idle-GPU note's way out must say to drop it.
  if (s.scenario.section("workload").has("dp")) doc["parallelism"]["dp_given"] = true;
  if (!t.chakra && t.imported_source.empty()) {
    nlohmann::json recipe = recipe_json(s.scenario, t.result.job);
    if (!recipe.is_null()) doc["recipe"] = std::move(recipe);
    else if (nlohmann::json d = no_recipe_defaults(s.scenario, t.result.job); !d.is_null())
      doc["no_recipe"] = std::move(d);
  }
  if (t.chakra) add_chakra(doc, t.imported_source, *t.chakra);
  else if (!t.imported_source.empty()) add_imported(doc, t.imported_source, t.imported);
  // The report's notes, in the document too (the dashboard shows them).
  {
    nlohmann::json notes = nlohmann::json::array();
    if (const std::string idle = idle_gpus_note(doc); !idle.empty()) notes.push_back(idle);
    for (const std::string& n : recipe_notes(doc)) notes.push_back(n);
    for (const std::string& n : layout_notes(doc)) notes.push_back(n);
    if (!notes.empty()) doc["notes"] = std::move(notes);
  }
  if (t.failures) {
    const workload::TrainResult& f = t.failures->run;
    const Time base = t.failures->baseline;
    nlohmann::json evs = nlohmann::json::array();
    for (const auto& e : f.failures)
      evs.push_back({{"at_ms", round_to(e.at.seconds() * 1e3, 6)},
                     {"what", e.what},
                     {"flows_rerouted", e.flows_rerouted},
                     {"repaired_at_ms", round_to(e.repaired.seconds() * 1e3, 6)}});
    doc["failures"] = {{"baseline_iteration_ms", round_to(base.seconds() * 1e3, 6)},
                       {"iteration_ms", round_to(f.iteration.seconds() * 1e3, 6)},
                       // no slowdown for a job that stopped: iteration_ms is then when it stopped
                       {"slowdown",
                        f.job_failed
                            ? nlohmann::json(nullptr)
                            : nlohmann::json(round_to(base.ps > 0 ? f.iteration.seconds() / base.seconds() : 1.0, 6))},
                       {"scheduled", t.failures->scheduled},
                       {"job_failed", f.job_failed},
                       {"failure", f.failure},
                       {"events", evs}};
    if (t.failures->straggler) {
      const diagnose::StragglerReport& st = *t.failures->straggler;
      const auto ms = [](Time x) { return round_to(x.seconds() * 1e3, 6); };
      nlohmann::json parts = nlohmann::json::array();
      for (const auto& p : st.parts)
        parts.push_back({{"stage", p.stage},
                         {"part", workload::category_name(p.category)},
                         {"excess_ms", ms(p.excess)},
                         {"ops", p.ops},
                         {"worst_op", p.worst},
                         {"worst_excess_ms", ms(p.worst_excess)},
                         {"gpus", gpu_ranges(p.worst_gpus)}});
      nlohmann::json costs = nlohmann::json::array();
      for (const auto& c : t.failures->costs)
        costs.push_back({{"what", c.what}, {"at_ms", ms(c.at)}, {"recovered_ms", ms(c.recovered)}});
      doc["failures"]["straggler"] = {{"slowdown_ms", ms(st.slowed - st.baseline)},
                                      {"critical_path_excess_ms", ms(st.path_excess)},
                                      {"critical_path_ops", st.path_length},
                                      {"parts", parts},
                                      {"failure_costs", costs}};
    }
  }
  if (t.reliability) doc["reliability"] = training_reliability_json(*t.reliability);
  if (t.data_loading) doc["data_loading"] = data_loading_json(*t.data_loading, t.result.iteration);
  if (t.write_behind) doc["checkpoint_behind_training"] = write_behind_json(*t.write_behind);
  if (!t.tenants_spanned.empty()) doc["tenants_spanned"] = t.tenants_spanned;
  if (t.swept) add_sweep(doc, t.sweep);
  return doc;
}

void write_train_table(const nlohmann::json& d, std::ostream& out) {
  write_training_table(d, out);
  if (d.contains("reliability"))
    write_training_reliability(d["reliability"], out, d.contains("parallelism") ? &d["parallelism"] : nullptr);
  if (d.contains("data_loading")) write_data_loading(d["data_loading"], out);
  if (d.contains("checkpoint_behind_training")) write_write_behind(d["checkpoint_behind_training"], out);
  if (d.contains("tenants_spanned")) {
    std::string names;
    for (const auto& x : d["tenants_spanned"]) names += (names.empty() ? "" : ", ") + x.get<std::string>();
    out << "\n  note: the job's GPUs span the tenants " << names
        << ", whose VRFs do not route to each other: as the configuration plan isolates them, the job could not run "
           "across them (jobs: with a job per tenant times each on its own servers)\n";
  }
  write_injected_failures(d, out);
}

void write_injected_failures(const nlohmann::json& d, std::ostream& out) {
  if (!d.contains("failures")) return;
  const auto& f = d["failures"];
  if (f["job_failed"].get<bool>())
    out << fmt::format("\n  with the injected failures: JOB FAILED at {} ms (the iteration takes {} ms without "
                       "them): {}\n",
                       fixed(f["iteration_ms"].get<double>(), 2), fixed(f["baseline_iteration_ms"].get<double>(), 2),
                       f["failure"].get<std::string>());
  else
    out << fmt::format("\n  with the injected failures: iteration {} ms vs {} ms without ({}x)\n",
                       fixed(f["iteration_ms"].get<double>(), 2), fixed(f["baseline_iteration_ms"].get<double>(), 2),
                       fixed(f["slowdown"].get<double>(), 3));
  // The rates above are the failure-free iteration's; at the slowed one (the same work per iteration) they
  // scale by 1 / slowdown, and the days to train by the slowdown, were the failures to last the whole run.
  const double slowdown = f["slowdown"].is_number() ? f["slowdown"].get<double>() : 0;
  if (!f["job_failed"].get<bool>() && slowdown > 0 && d["mfu"].is_number() && d["tokens_per_second"].is_number()) {
    out << fmt::format("    at that iteration: MFU {}%, {} tokens/s", fixed(100 * d["mfu"].get<double>() / slowdown, 1),
                       thousands(std::llround(d["tokens_per_second"].get<double>() / slowdown)));
    if (d["days_to_train"].is_number())
      out << fmt::format(", {} days to train", fixed(d["days_to_train"].get<double>() * slowdown, 1));
    out << " (if the injected failures lasted the whole run)\n";
  }
  out << fmt::format("    {} scheduled, {} applied before the run ended\n",
                     plural(f["scheduled"].get<int64_t>(), "event", "events"), f["events"].size());
  size_t shown = 0;
  std::string before;
  for (const auto& e : f["events"]) {
    if (++shown > kEventsShown) {
      out << fmt::format("    ... and {} more (--format json lists every event)\n",
                         thousands(static_cast<int64_t>(f["events"].size() - kEventsShown)));
      break;
    }
    const std::string what = event_text(e["what"].get<std::string>(), before);
    before = e["what"].get<std::string>();
    out << fmt::format("    {} ms  {}{}\n", fixed(e["at_ms"].get<double>(), 3), what,
                       // A link down before the run is routed around from the start (bench_report.cpp).
                       e["flows_rerouted"].get<int64_t>() > 0 &&
                               !(e["at_ms"].get<double>() == 0 && e["repaired_at_ms"].get<double>() == 0)
                           // They waited from the failure to their reroute: network.local_repair for a switch's
                           // dead uplink, network.convergence for a dead downlink or NIC link (engine/failures).
                           ? fmt::format(" -> {} rerouted at {} ms, {} ms later (network.local_repair or "
                                         "network.convergence)",
                                         plural(e["flows_rerouted"].get<int64_t>(), "flow", "flows"),
                                         fixed(e["repaired_at_ms"].get<double>(), 3),
                                         fixed(e["repaired_at_ms"].get<double>() - e["at_ms"].get<double>(), 3))
                           : "");
  }
  // The study leaves the straggler report out of an iteration the failures did not lengthen (study/train.hpp).
  if (!f["job_failed"].get<bool>() && !f.contains("straggler"))
    out << "    (the iteration took no longer: the events slowed nothing on its path, e.g. a factor of 1 or events "
           "after it ended; no straggler report)\n";
  if (!f.contains("straggler")) return;
  const auto& st = f["straggler"];
  if (st["slowdown_ms"].get<double>() < 0)
    out << fmt::format("\n  the step was {} ms faster with the failures (routing around them moved flows onto other "
                       "paths); {} ms of excess on its critical path of {} ops:\n",
                       fixed(-st["slowdown_ms"].get<double>(), 3),
                       fixed(st["critical_path_excess_ms"].get<double>(), 3), st["critical_path_ops"].get<int64_t>());
  else
    out << fmt::format(
        "\n  what made the step slower (+{} ms; {} ms of excess on the slowed critical path of {} ops):\n",
        fixed(st["slowdown_ms"].get<double>(), 3), fixed(st["critical_path_excess_ms"].get<double>(), 3),
        st["critical_path_ops"].get<int64_t>());
  // The slow GPUs among the events (a stage's GPUs run in lockstep: the timeline cannot tell which one was
  // slow, but the scenario says so), shown first in a part's GPUs.
  std::vector<int64_t> slow;
  static const std::regex kGpu(R"(gpu (\d+) slowed x.*)");  // scenario.cpp, failure_events
  for (const auto& e : f["events"])
    if (std::smatch m; std::regex_match(e["what"].get_ref<const std::string&>(), m, kGpu))
      slow.push_back(std::stoll(m[1].str()));
  const auto gpus_cell = [&](const std::string& gpus) {
    const std::vector<int64_t> in = slow_among(gpus, slow);
    if (in.empty()) return short_list(gpus);
    std::string named;
    for (const int64_t g : in) named += (named.empty() ? "" : ", ") + std::to_string(g);
    return fmt::format("slow {} of {}", named, short_list(gpus));
  };
  Table parts({"stage", "part", "excess (ms)", "ops", "slowest op", "its excess (ms)", "GPUs"});
  for (const auto& p : st["parts"])
    parts.add({std::to_string(p["stage"].get<int>()), p["part"].get<std::string>(),
               fixed(p["excess_ms"].get<double>(), 3), std::to_string(p["ops"].get<int>()),
               workload::op_words(p["worst_op"].get<std::string>()), fixed(p["worst_excess_ms"].get<double>(), 3),
               gpus_cell(p["gpus"].get<std::string>())});
  bool faster = false;
  for (const auto& p : st["parts"]) faster = faster || p["excess_ms"].get<double>() < 0;
  if (st["parts"].empty()) out << "    nothing on the critical path took longer than without the failures\n";
  else parts.write(out, "    ");
  if (faster)
    out << "    (the excesses add up to the critical path's; a negative one ran faster with the failures, its "
           "traffic moved elsewhere)\n";
  if (!st["failure_costs"].empty()) {
    out << "  each failure left out in turn (the iteration time it costs):\n";
    Table c({"failure", "at (ms)", "costs (ms)"});
    for (const auto& x : st["failure_costs"])
      c.add({x["what"].get<std::string>(), fixed(x["at_ms"].get<double>(), 3),
             fixed(x["recovered_ms"].get<double>(), 3)});
    c.write(out, "    ");
    if (st["failure_costs"].size() > 1)
      out << "    (each cost is what removing that failure alone saves, the others kept: the costs need not add up "
             "to the slowdown, and a failure hidden behind a worse one costs 0)\n";
  }
}

}  // namespace podnet::report
