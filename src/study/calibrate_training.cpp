#include "study/calibrate_training.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <sstream>

#include "core/error.hpp"
#include "core/units.hpp"
#include "scenario/setup.hpp"
#include "study/train.hpp"

namespace podnet::study {

namespace {

constexpr const char* kDefaultKey = "workload.sustained_fraction";

struct Point {
  double seconds = 0, mfu = 0;
  workload::Job job;
};

class TrainingEvaluator {
 public:
  explicit TrainingEvaluator(const TrainingCalibrationInput& in) : in_(in) {}

  // The iteration with `extra` --set entries after the user's.
  Point run(const std::vector<std::string>& extra) {
    std::vector<std::string> sets = in_.sets;
    if (!in_.engine.empty()) sets.push_back("network.engine=" + in_.engine);
    sets.insert(sets.end(), extra.begin(), extra.end());
    const scenario::Setup s = scenario::resolve(scenario::load(in_.scenario, sets, in_.fragments));
    TrainRequest r;
    r.allow_oom = true;  // a job that ran is timed even where podnet's memory estimate says it would not fit
    r.failures = false;  // the log's steady steps: no injected failures
    const TrainStudy t = train(s, r);
    ++evaluations;
    engine = s.engine;
    return {t.result.iteration.seconds(), t.result.mfu, t.job};
  }

  int evaluations = 0;
  std::string engine;

 private:
  const TrainingCalibrationInput& in_;
};

// The start of a workload key the scenario derives from its presets when it does not set it.
std::optional<double> derived_start(const std::string& key, const workload::Job& j) {
  if (key == "workload.sustained_fraction") return j.sustained_fraction;
  if (key == "workload.layer_overhead") return j.layer_overhead;
  if (key == "workload.compute_efficiency") return j.compute_efficiency;
  if (key == "workload.attention_efficiency") return j.attention_efficiency;
  if (key == "workload.fp8_efficiency") return j.fp8_efficiency;
  return std::nullopt;
}

// A step time as every calibrate output prints it: "1,115.0 ms".
std::string ms_text(double seconds) {
  const int64_t tenths = std::llround(seconds * 1e4);
  return fmt::format("{}.{} ms", thousands(tenths / 10), tenths % 10);
}

}  // namespace

TrainingCalibration calibrate_training(const TrainingCalibrationInput& in) {
  TrainingCalibration c;
  c.source = in.log.source;
  c.format = in.log.format;
  TrainingEvaluator ev(in);
  const Point start = ev.run({});
  c.engine = ev.engine;
  c.gpus = start.job.gpus();
  c.global_batch = start.job.global_batch;
  c.seq = start.job.model.seq;

  // The log's global batch against the job's.
  std::map<int64_t, int> batches;
  const TrainingStep* said = nullptr;
  for (const auto& st : in.log.steps)
    if (st.global_batch > 0) {
      ++batches[st.global_batch];
      if (!said) said = &st;
    }
  if (!batches.empty() && !batches.count(c.global_batch)) {
    int64_t most = batches.begin()->first;
    for (const auto& [b, n] : batches)
      if (n > batches[most]) most = b;
    throw InputError(fmt::format(
        "{}:{}: the log's global batch size is {}; the scenario's job runs workload.global_batch = {}: describe the "
        "log's job (--set workload.global_batch={} and its model, parallelism and microbatch)",
        in.log.source, said->line, thousands(most), thousands(c.global_batch), most));
  }
  c.steps = steady_steps(in.log, c.global_batch);
  c.log_seconds = c.steps.median;

  const scenario::Scenario sc = scenario::load(in.scenario, in.sets, in.fragments);
  const std::string fit = in.fit.empty() ? kDefaultKey : in.fit;
  const std::string name = fit.substr(0, fit.find('='));
  const bool default_key = name == kDefaultKey;  // the jitter's fit goes with it (bounds or not)

  // The jitter first (it slows the step the compute key is fitted to).
  std::vector<std::string> variability;
  c.speed_cv = start.job.speed_cv;
  c.jitter_start = start.job.jitter_cv;
  if (default_key && c.steps.interval == 1 && c.steps.kept >= kMinJitterSteps) {
    variability = {"workload.variability=measured", fmt::format("workload.speed_cv={:.9g}", c.speed_cv)};
    // podnet's steps 1..K at jitter j. Their spread is read with the log's own estimator (robust_cv), so that
    // both sides measure the same thing: a step waits for its slowest GPU, so its time is skewed to the right,
    // where MAD / median reads less than the standard deviation (about 0.8 of it for the max of 8 normals).
    const auto steps_at = [&](double j) {
      std::vector<double> t;
      for (int k = 1; k <= kJitterSteps; ++k) {
        std::vector<std::string> sets = variability;
        sets.push_back(fmt::format("workload.jitter_cv={:.9g}", j));
        sets.push_back(fmt::format("workload.step={}", k));
        t.push_back(ev.run(sets).seconds);
      }
      if (in.progress) in.progress(ev.evaluations, 0, "workload.jitter_cv");
      return t;
    };
    double lo = 0, hi = kMaxFittedJitterCv;
    std::vector<double> steps_hi = steps_at(hi);  // the steps at `hi`, which ends as the fitted value
    double cv_hi = robust_cv(steps_hi);
    if (cv_hi < c.steps.robust_cv) {
      c.jitter_cv = hi;
      c.podnet_step_cv = cv_hi;
      c.doubts.push_back(fmt::format("workload.jitter_cv at its upper bound ({}): podnet's steps vary by {:.2f}% "
                                     "there, the log's by {:.2f}%; something else makes the log's steps uneven",
                                     kMaxFittedJitterCv, 100 * cv_hi, 100 * c.steps.robust_cv));
    } else {
      for (int i = 0; i < kJitterBisections; ++i) {
        const double mid = (lo + hi) / 2;
        std::vector<double> t = steps_at(mid);
        const double cv = robust_cv(t);
        if (cv < c.steps.robust_cv) {
          lo = mid;
        } else {
          hi = mid, cv_hi = cv;
          steps_hi = std::move(t);
        }
      }
      c.jitter_cv = hi;
      c.podnet_step_cv = cv_hi;
    }
    c.jitter_fitted = true;
    variability.push_back(fmt::format("workload.jitter_cv={:.9g}", c.jitter_cv));
    // The log's median step is a median of many steps; `podnet train` reports one, step 0. The fit sets the
    // median of podnet's steps 1..K to the log's, through step 0's ratio to it (about constant in the key).
    c.step0_over_median = ev.run(variability).seconds / median_of(steps_hi);
    c.fitted.emplace_back("workload.variability", "measured");
    c.fitted.emplace_back("workload.speed_cv", fmt::format("{:.9g}", c.speed_cv));
    c.fitted.emplace_back("workload.jitter_cv", fmt::format("{:.9g}", c.jitter_cv));
  } else if (default_key) {
    c.notes.push_back(
        c.steps.interval > 1
            ? fmt::format(
                  "workload.jitter_cv is not fitted: the log's lines are means over {} iterations (Megatron-LM's "
                  "--log-interval), which hide the step-to-step jitter; log every step (--log-interval 1) "
                  "to fit it",
                  c.steps.interval)
            : fmt::format("workload.jitter_cv is not fitted: {} steady steps, fewer than {}", c.steps.kept,
                          kMinJitterSteps));
  }
  c.key = fit_key(fit, sc, derived_start(name, start.job));
  const FittedKey& k = c.key;

  // g(u) = ln T(x(u)) - ln t_log, by false position (Illinois) on [lo, hi].
  const double target = std::log(c.log_seconds * c.step0_over_median);
  std::map<double, Point> tried;
  double best_gap = std::abs(std::log(start.seconds) - target);
  const auto g = [&](double u) {
    const double x = from_u(k, u);
    std::vector<std::string> sets = variability;
    sets.push_back(k.key + "=" + fit_value_text(k, x));
    const Point p = ev.run(sets);
    tried[u] = p;
    best_gap = std::min(best_gap, std::abs(std::log(p.seconds) - target));
    if (in.progress) in.progress(ev.evaluations, best_gap, k.key);
    return std::log(p.seconds) - target;
  };
  double a = to_u(k, k.lo), b = to_u(k, k.hi);
  double ga = g(a), gb = g(b);
  if (ga == gb)
    throw InputError(fmt::format("--fit {}: the job's step time is {} at both {} and {}: this key does not change "
                                 "it; fit a compute key (workload.sustained_fraction, workload.layer_overhead, "
                                 "workload.compute_efficiency)",
                                 k.key, ms_text(tried[a].seconds), k.lo_text, k.hi_text));
  double u = 0;
  if (ga == 0 || gb == 0 || (ga < 0) != (gb < 0)) {
    int side = 0;
    u = ga == 0 ? a : b;
    for (int i = 0; i < kMaxTrainingFitSimulations - 2 && ga != 0 && gb != 0; ++i) {
      u = (a * gb - b * ga) / (gb - ga);
      const double gu = g(u);
      if (std::abs(gu) < 1e-5) break;
      if ((gu < 0) == (ga < 0)) {
        a = u, ga = gu;
        if (side == -1) gb /= 2;
        side = -1;
      } else {
        b = u, gb = gu;
        if (side == +1) ga /= 2;
        side = +1;
      }
    }
  } else {
    const bool low = std::abs(ga) <= std::abs(gb);
    u = low ? a : b;
    const ParamSpec* spec = find_param_spec(k.key);
    const bool at_limit = spec && (low ? k.lo <= spec->min : k.hi >= spec->max);
    c.doubts.push_back(fmt::format(
        "{} at its {} bound ({}): the log's steps ({}) need a value beyond [{} .. {}]; podnet takes {} there. "
        "Check the scenario describes the log's job (model, GPU, parallelism, microbatch, precision, "
        "recompute){}",
        k.key, low ? "lower" : "upper", fit_value_text(k, from_u(k, u)), ms_text(c.log_seconds), k.lo_text, k.hi_text,
        ms_text(tried[u].seconds / c.step0_over_median),
        at_limit ? fmt::format(": {} cannot go further", k.key)
                 : fmt::format(", or widen the bounds (--fit {}=LO:HI)", k.key)));
  }
  c.key.value = from_u(k, u);
  c.key.text = fit_value_text(k, c.key.value);
  const Point& fitted = tried.count(u) ? tried[u] : start;
  c.start_seconds = start.seconds;
  c.start_mfu = start.mfu;
  c.fit_step0_seconds = fitted.seconds;
  c.fit_seconds = fitted.seconds / c.step0_over_median;
  c.fit_mfu = fitted.mfu;
  c.evaluations = ev.evaluations;

  // The log's GPU count is not in the log: the scenario gave it, and a wrong count (a 512-GPU cluster's scenario
  // for a log of 8) moves the fit as much as the GPUs' speed does.
  if (c.key.start > 0 && (c.key.value / c.key.start < 0.6 || c.key.value / c.key.start > 1.6))
    c.doubts.push_back(fmt::format("{} fitted to {:.2f}x its start ({} from {}): check the scenario's job is the "
                                   "log's, its GPU count ({}) first (a training log does not record it: --set "
                                   "topology.gpus and workload.dp to the log's)",
                                   k.key, c.key.value / c.key.start, c.key.text, c.key.start_text, thousands(c.gpus)));
  if (c.fit_mfu < kMinTrustedMfu)
    c.doubts.push_back(fmt::format("podnet's MFU at the fitted value is {:.1f}% (below {:.0f}%): a job this slow is "
                                   "not what the scenario describes, or the log's steps include more than training "
                                   "(evaluation, checkpoints, stalls)",
                                   100 * c.fit_mfu, 100 * kMinTrustedMfu));
  if (!default_key && c.steps.interval == 1)
    c.notes.push_back(fmt::format("workload.jitter_cv is not fitted with --fit {}: the jitter's fit goes with "
                                  "workload.sustained_fraction",
                                  name));
  if (c.steps.robust_cv > kMaxTrustedStepCv)
    c.doubts.push_back(fmt::format(
        "the steady steps vary by {:.1f}% (robust CV, above {:.0f}%): the log is not one steady job (restarts with "
        "other settings, a slow or failing node, data-loader stalls); cut the log to one steady stretch",
        100 * c.steps.robust_cv, 100 * kMaxTrustedStepCv));
  if (c.jitter_fitted && c.doubts.empty())
    c.notes.push_back(
        fmt::format("with the fitted jitter podnet's steps vary; the fit sets their median ({} steps) "
                    "to the log's; `podnet train` reports one step (workload.step 0), {} ({:+.2f}% from that median)",
                    kJitterSteps, ms_text(c.fit_step0_seconds), 100 * (c.step0_over_median - 1)));
  if (c.steps.runs > 1)
    c.notes.push_back(fmt::format("the log holds {} runs (the iteration count starts again): each run's warm-up "
                                  "is left out",
                                  c.steps.runs));
  if (c.steps.other_batch > 0)
    c.notes.push_back(fmt::format("{} at a global batch other than {} (a batch ramp-up) {} left out",
                                  plural(static_cast<int64_t>(c.steps.other_batch), "line", "lines"),
                                  thousands(c.global_batch), c.steps.other_batch == 1 ? "is" : "are"));
  c.notes.push_back(fmt::format("workload.speed_cv (the persistent spread between GPUs, {:.2f}% here) is not "
                                "fitted: one job's log cannot tell it from the compute key",
                                100 * c.speed_cv));
  c.fitted.emplace_back(c.key.key, c.key.text);
  return c;
}

std::string training_fragment_yaml(const TrainingCalibration& c) {
  std::ostringstream out;
  out << fmt::format("# podnet calibrate --training: fitted on {} ({}), {} steady steps, median {}\n", c.source,
                     c.format, c.steps.kept, ms_text(c.log_seconds));
  out << fmt::format("# the job: {} GPUs, global batch {} x seq {}; podnet {} -> {} ({} engine)\n", thousands(c.gpus),
                     thousands(c.global_batch), thousands(c.seq), ms_text(c.start_seconds), ms_text(c.fit_seconds),
                     c.engine);
  for (const auto& n : c.notes) out << "# note: " << n << "\n";
  for (const auto& n : c.doubts) out << "# NOT TRUSTED (written with --force): " << n << "\n";
  out << "# apply with: podnet train SCENARIO --config-add THIS_FILE\n";
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> by_section;
  for (const auto& [key, value] : c.fitted)
    by_section[key.substr(0, key.find('.'))].emplace_back(key.substr(key.find('.') + 1), value);
  for (const auto& [section, keys] : by_section) {
    out << section << ":\n";
    for (const auto& [name, value] : keys) out << fmt::format("  {}: {}\n", name, value);
  }
  return out.str();
}

}  // namespace podnet::study
