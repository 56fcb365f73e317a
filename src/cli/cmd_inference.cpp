// `podnet inference SCENARIO`: LLM serving on the fabric: time to first
// token, time per output token and throughput of the scenario's `inference:`
// layout under its request stream (model: src/workload/inference.hpp).
// Flags -> --set -> study::inference -> report.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/common.hpp"
#include "core/error.hpp"
#include "report/html.hpp"
#include "report/inference_report.hpp"
#include "report/web_assets.hpp"
#include "study/inference.hpp"
#include "workload/model.hpp"

namespace podnet::cli {

namespace {

struct InferenceOptions {
  std::string rate, requests, prompt, output, replicas, disaggregated, target_ttft, target_tpot, html;
};

int cmd_inference(Common c, const InferenceOptions& o) {
  if (!o.html.empty() && !report::dashboard_installed())
    throw InputError(std::string("--html: ") + report::kDashboardMissing);
  check_output_dir("--out", c.out_dir);
  check_output_file("--html", o.html);
  const auto sugar = [&](const std::string& value, const char* option, const char* key) {
    if (!value.empty()) set_by(c, option, key, value);
  };
  sugar(o.rate, "--rate", "inference.rate");
  sugar(o.requests, "--requests", "inference.requests");
  sugar(o.prompt, "--prompt", "inference.prompt");
  sugar(o.output, "--output", "inference.output");
  sugar(o.replicas, "--replicas", "inference.replicas");
  sugar(o.target_ttft, "--target-ttft", "inference.target_ttft");
  sugar(o.target_tpot, "--target-tpot", "inference.target_tpot");
  if (!o.disaggregated.empty()) {
    // P:D -> a prefill pool of P replicas and a decode pool of D.
    const auto colon = o.disaggregated.find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == o.disaggregated.size())
      throw InputError(fmt::format("--disaggregated {}: expected PREFILL:DECODE replicas, e.g. 1:3", o.disaggregated));
    set_by(c, "--disaggregated", "inference.disaggregated", "true");
    set_by(c, "--disaggregated", "inference.prefill_replicas", o.disaggregated.substr(0, colon));
    set_by(c, "--disaggregated", "inference.decode_replicas", o.disaggregated.substr(colon + 1));
  }
  RunLabel label;
  const scenario::Setup s = load_setup(c, "inference", label);
  // Training's layout keys given on the command line: serving has its own (inference.*), so say which.
  {
    std::vector<std::string> unused;
    // workload.KEY -> serving's own key, or none.
    static const std::pair<const char*, const char*> kTraining[] = {
        {"tp", "inference.tp"},  {"pp", "inference.pp"},    {"precision", "inference.precision"},
        {"dp", nullptr},         {"cp", nullptr},           {"ep", nullptr},
        {"microbatch", nullptr}, {"global_batch", nullptr}, {"interleave", nullptr}};
    for (const auto& [k, own] : kTraining) {
      const std::string key = std::string("workload.") + k;
      if (!s.scenario.from_set.count(key)) continue;
      unused.push_back(own ? fmt::format("{} (serving's is {})", key, own) : key);
    }
    if (!unused.empty())
      std::cerr << fmt::format("podnet: note: {} {} training's and not used here; the serving layout is "
                               "inference.tp, inference.pp and inference.replicas (experts are spread over TP)\n",
                               fmt::join(unused, ", "), unused.size() == 1 ? "is" : "are");
  }
  // FP8 on a GPU without FP8 tensor cores: the weights are read as FP8, the matmuls run at BF16's rate.
  if (s.scenario.section("inference").get_string("precision") == "fp8")
    if (const workload::GpuSpec* g = workload::find_gpu(s.scenario.section("workload").get_string("gpu"));
        g && g->fp8_peak_flops <= 0)
      std::cerr << fmt::format(
          "podnet: note: inference.precision fp8 on {}, which has no FP8 tensor cores: the weights "
          "are read as FP8 (weight-only, as W8A16 kernels do) and the matmuls run at BF16's "
          "peak\n",
          g->name);
  const nlohmann::json doc = report::inference_document(s, study::inference(s, study_progress("inference", label)));
  emit(c, s.scenario, doc, "inference", report::write_inference_table);
  if (!o.html.empty()) {
    write_out("--html", o.html,
              report::html_page({{"kind", "inference"}, {"document", doc}}, "podnet inference " + s.scenario.name));
    std::cerr << "podnet: wrote " << o.html << "\n";
  }
  return kExitOk;
}

}  // namespace

void add_inference_command(CLI::App& app, Action& action) {
  auto c = std::make_shared<Common>();
  auto o = std::make_shared<InferenceOptions>();
  auto* cmd = app.add_subcommand(
      "inference",
      "LLM serving on the fabric: time to first token, time per output token and throughput of a serving layout "
      "under a request stream");
  add_common(cmd, *c, false);
  c->scenario = kDefaultScenario;  // as train and design take it; the scenario named on the command line replaces it
  cmd->add_option("--rate", o->rate, "requests per second (Poisson arrivals; inference.rate)")->type_name("R");
  cmd->add_option("--requests", o->requests, "requests simulated (inference.requests)")->type_name("N");
  cmd->add_option("--prompt", o->prompt, "prompt tokens of each request (inference.prompt)")->type_name("TOKENS");
  cmd->add_option("--output", o->output, "output tokens of each request (inference.output)")->type_name("TOKENS");
  cmd->add_option("--replicas", o->replicas, "co-located replicas (inference.replicas)")->type_name("N");
  cmd->add_option("--disaggregated", o->disaggregated,
                  "a prefill pool and a decode pool of P and D replicas; each request's KV cache crosses the fabric")
      ->type_name("P:D");
  cmd->add_option("--target-ttft", o->target_ttft,
                  "a latency target on time to first token (p99; inference.target_ttft): podnet then searches the "
                  "highest request rate that meets the targets")
      ->type_name("TIME");
  cmd->add_option("--target-tpot", o->target_tpot,
                  "a latency target on time per output token (p99; inference.target_tpot)")
      ->type_name("TIME");
  cmd->add_option("--html", o->html,
                  "also write a self-contained HTML report: the latency percentiles, throughput "
                  "and the rate at the latency target")
      ->type_name("FILE.html");
  cmd->footer(
      "The model and GPU are the scenario's workload.model and workload.gpu; the layout, batching and request\n"
      "stream its `inference:` section (`podnet list keys` lists them; docs/commands/inference.md explains them).\n\n"
      "Examples:\n"
      "  podnet inference leafspine-8k --set workload.model=llama3-70b --rate 2\n"
      "  podnet inference leafspine-8k --set workload.model=llama3-70b --replicas 4 --rate 8 --prompt 2048\n"
      "  podnet inference leafspine-8k --set workload.model=llama3-70b --disaggregated 1:3 --rate 8\n"
      "  podnet inference leafspine-8k --set workload.model=llama3-70b --replicas 4 --target-ttft 2s --target-tpot "
      "200ms\n"
      "  podnet inference leafspine-8k --set workload.model=mixtral-8x7b --set inference.tp=4 --format json");
  cmd->callback([&action, c, o] { action = [c, o] { return cmd_inference(*c, *o); }; });
}

}  // namespace podnet::cli
