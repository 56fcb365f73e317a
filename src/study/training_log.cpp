#include "study/training_log.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/units.hpp"

namespace podnet::study {

namespace {

// The number right after `label` (spaces allowed between), or nullopt when the label is absent. `bad` is set
// when the label is there but no finite non-negative number follows it.
std::optional<double> number_after(const std::string& s, const std::string& label, bool& bad) {
  const size_t p = s.find(label);
  if (p == std::string::npos) return std::nullopt;
  size_t i = p + label.size();
  while (i < s.size() && s[i] == ' ') ++i;
  const char* begin = s.c_str() + i;
  char* end = nullptr;
  const double v = std::strtod(begin, &end);
  // The number must end there: "1,115.0" (a thousands separator, which no trainer prints) would read as 1.
  const bool ends = *end == '\0' || *end == ' ' || *end == ':' || *end == '|' || *end == ']' || *end == '\t' ||
                    (*end == ',' && !std::isdigit(static_cast<unsigned char>(end[1])));
  if (end == begin || !std::isfinite(v) || v < 0 || !ends) {
    bad = true;
    return std::nullopt;
  }
  return v;
}

// "iteration <n>/" (Megatron, NeMo 2): n, or nullopt.
std::optional<int64_t> iteration_of(const std::string& s) {
  size_t p = 0;
  while ((p = s.find("iteration", p)) != std::string::npos) {
    size_t i = p + 9;
    while (i < s.size() && s[i] == ' ') ++i;
    size_t j = i;
    while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
    size_t k = j;
    while (k < s.size() && s[k] == ' ') ++k;
    if (j > i && k < s.size() && s[k] == '/') return std::stoll(s.substr(i, j - i));
    p = i;
  }
  return std::nullopt;
}

std::string where(const std::string& source, int line) { return fmt::format("{}:{}", source, line); }

constexpr const char* kMegatron = "elapsed time per iteration (ms):";
constexpr const char* kNemo2 = "train_step_timing in s:";
constexpr const char* kNemo1 = "train_step_timing in s=";

}  // namespace

TrainingLog parse_training_log(std::istream& in, const std::string& source) {
  TrainingLog log;
  log.source = source;
  std::map<int64_t, TrainingStep> bar;  // NeMo 1's progress bar: the last redraw of each global step
  std::string physical;
  int line = 0;
  int64_t sequence = 0;
  while (std::getline(in, physical)) {
    ++line;
    size_t start = 0;
    while (start <= physical.size()) {  // a progress bar redraws with '\r': each redraw is a record
      size_t cr = physical.find('\r', start);
      if (cr == std::string::npos) cr = physical.size();
      const std::string s = physical.substr(start, cr - start);
      start = cr + 1;
      bool bad = false;
      TrainingStep step;
      step.line = line;
      std::string format;
      bool bar_redraw = false;  // NeMo 1's progress bar: redraws of one step replace each other
      if (auto ms = number_after(s, kMegatron, bad)) {
        format = "Megatron-LM";
        step.seconds = *ms / 1e3;
        const auto it = iteration_of(s);
        if (!it)
          throw InputError(
              fmt::format("{}: a Megatron-LM step line without its 'iteration N/M' field", where(source, line)));
        step.iteration = *it;
        bool b2 = false;
        if (auto gb = number_after(s, "global batch size:", b2)) step.global_batch = static_cast<int64_t>(*gb);
      } else if (bad) {
        throw InputError(fmt::format("{}: expected a time in milliseconds after '{}' (a plain number: 1115.2)",
                                     where(source, line), kMegatron));
      } else if (auto sec = number_after(s, kNemo2, bad)) {
        format = "NeMo 2";
        step.seconds = *sec;
        const auto it = iteration_of(s);
        step.iteration = it ? *it : ++sequence;  // as printed (0-based)
        bool b2 = false;
        if (auto gb = number_after(s, "global_batch_size:", b2)) step.global_batch = static_cast<int64_t>(*gb);
      } else if (bad) {
        throw InputError(fmt::format("{}: expected a time in seconds after '{}' (a plain number: 12.39)",
                                     where(source, line), kNemo2));
      } else if (auto sec1 = number_after(s, kNemo1, bad)) {
        step.seconds = *sec1;
        bool b2 = false;
        if (auto gb = number_after(s, "global_batch_size=", b2)) step.global_batch = static_cast<int64_t>(*gb);
        if (auto gs = number_after(s, "global_step=", b2)) {
          format = "NeMo 1 progress bar";
          bar_redraw = true;
          step.iteration = static_cast<int64_t>(std::llround(*gs));
        } else if (auto n = number_after(s, "Step ", b2)) {
          format = "NeMo step timing";
          step.iteration = static_cast<int64_t>(std::llround(*n));
        } else {
          format = "NeMo step timing";
          step.iteration = ++sequence;
        }
      } else if (bad) {
        throw InputError(fmt::format("{}: expected a time in seconds after '{}' (a plain number: 3.13)",
                                     where(source, line), kNemo1));
      } else {
        if (cr == physical.size()) break;
        continue;
      }
      if (step.seconds <= 0)
        throw InputError(
            fmt::format("{}: a step of {} s: expected a positive time", where(source, line), step.seconds));
      if (log.format.empty()) log.format = format;
      if (bar_redraw) bar[step.iteration] = step;
      else log.steps.push_back(step);
      if (cr == physical.size()) break;
    }
  }
  if (!bar.empty()) {
    // The kept redraws in the order of their lines in the file (a restart's bar starts again at step 0: by
    // global step, two runs would interleave).
    std::vector<TrainingStep> v;
    for (auto& [it, st] : bar) v.push_back(st);
    std::stable_sort(v.begin(), v.end(), [](const TrainingStep& a, const TrainingStep& b) { return a.line < b.line; });
    log.steps.insert(log.steps.end(), v.begin(), v.end());
  }
  if (log.steps.empty())
    throw InputError(fmt::format(
        "{}: no training step lines: expected Megatron-LM's 'iteration N/M | ... | elapsed time per iteration "
        "(ms): T |' or NeMo's 'train_step_timing in s: T' (NeMo 2) / 'train_step_timing in s=T' (NeMo 1)",
        source));
  return log;
}

TrainingLog read_training_log(const std::string& path) {
  // The reason when it cannot be read (no such file, a directory), as every other input file says it.
  std::istringstream f(read_input_file(path, path, "a training log (Megatron-LM's or NeMo's iteration lines)"));
  return parse_training_log(f, path);
}

StepStats steady_steps(const TrainingLog& log, int64_t batch) {
  StepStats s;
  std::vector<const TrainingStep*> kept;
  int64_t run_first = 0, previous = 0;
  bool first_of_run = true;
  for (const auto& st : log.steps) {
    if (!first_of_run && st.iteration <= previous) {  // a restart
      ++s.runs;
      first_of_run = true;
    }
    previous = st.iteration;
    if (first_of_run) {
      run_first = st.iteration;
      first_of_run = false;
      ++s.warmup;
      continue;
    }
    if (st.iteration <= run_first + kWarmupIterations) {
      ++s.warmup;
      continue;
    }
    if (batch > 0 && st.global_batch > 0 && st.global_batch != batch) {
      ++s.other_batch;
      continue;
    }
    kept.push_back(&st);
  }
  s.kept = kept.size();
  if (s.kept < kMinSteadySteps)
    throw InputError(fmt::format("{}: {} of {}; need at least {}: left out {} as warm-up (every run's first line and "
                                 "the {} iterations after it){}",
                                 log.source,
                                 plural(static_cast<int64_t>(s.kept), "steady step line", "steady step lines"),
                                 log.steps.size(), kMinSteadySteps, s.warmup, kWarmupIterations,
                                 s.other_batch ? fmt::format(" and {} at a global batch other than the scenario's {}",
                                                             s.other_batch, thousands(batch))
                                               : ""));
  std::vector<double> t;
  std::vector<int64_t> gaps;
  for (size_t i = 0; i < kept.size(); ++i) {
    t.push_back(kept[i]->seconds);
    if (i > 0 && kept[i]->iteration > kept[i - 1]->iteration)
      gaps.push_back(kept[i]->iteration - kept[i - 1]->iteration);
  }
  s.first = kept.front()->iteration;
  s.last = kept.back()->iteration;
  std::sort(gaps.begin(), gaps.end());
  s.interval = gaps.empty() ? 1 : gaps[gaps.size() / 2];
  std::sort(t.begin(), t.end());
  const auto quantile = [&](double q) {  // linear interpolation between order statistics
    const double pos = q * static_cast<double>(t.size() - 1);
    const size_t lo = static_cast<size_t>(pos);
    const size_t hi = std::min(lo + 1, t.size() - 1);
    return t[lo] + (pos - static_cast<double>(lo)) * (t[hi] - t[lo]);
  };
  s.median = quantile(0.5);
  s.p5 = quantile(0.05);
  s.p95 = quantile(0.95);
  s.min = t.front();
  s.max = t.back();
  double sum = 0;
  for (double x : t) sum += x;
  s.mean = sum / static_cast<double>(t.size());
  s.robust_cv = robust_cv(t);
  return s;
}

double median_of(std::vector<double> t) {
  if (t.empty()) return 0;
  std::sort(t.begin(), t.end());
  return t.size() % 2 ? t[t.size() / 2] : (t[t.size() / 2 - 1] + t[t.size() / 2]) / 2;
}

double robust_cv(const std::vector<double>& t) {
  const double m = median_of(t);
  std::vector<double> dev;
  for (double x : t) dev.push_back(std::abs(x - m));
  return m > 0 ? 1.4826 * median_of(std::move(dev)) / m : 0;
}

}  // namespace podnet::study
