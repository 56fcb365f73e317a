#include "scenario/estimate.hpp"

#include <atomic>
#include <fmt/format.h>
#include <unistd.h>

#include "core/error.hpp"
#include "engine/registry.hpp"

namespace podnet::scenario::estimate {

namespace {
std::atomic<int64_t> g_limit{0};  // 0: the default

std::string mb(double bytes) {
  if (bytes >= 1e9) return fmt::format("{:.2f} GB", bytes / 1e9);
  return fmt::format("{:.0f} MB", bytes / 1e6);
}
}  // namespace

double bytes_per_flow(const std::string& engine) { return engine::engine_info(engine).traits.bytes_per_flow; }

double bytes_per_ring_hop(const std::string& engine) { return engine::engine_info(engine).traits.bytes_per_ring_hop; }

double engine_bytes_per_gpu(const std::string& engine) { return engine::engine_info(engine).traits.bytes_per_gpu; }

int64_t default_limit() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return int64_t{4} << 30;  // unknown machine: 4 GiB
  return static_cast<int64_t>(pages) * page / 2;
}

int64_t limit() {
  const int64_t l = g_limit.load();
  return l > 0 ? l : default_limit();
}

void set_limit(int64_t bytes) { g_limit.store(bytes > 0 ? bytes : 0); }

double Estimate::bytes() const {
  double b = 0;
  for (const auto& p : parts) b += p.bytes();
  return b;
}

Estimate fabric(int64_t gpus) {
  Estimate e;
  e.parts.push_back({"process", 1, kProcessBytes, ""});
  e.parts.push_back({"GPUs", static_cast<double>(gpus), kBytesPerGpu, "topology.gpus"});
  return e;
}

void add_threads(Estimate& e, const std::string& engine, double gpus, int32_t threads) {
  const engine::EngineTraits& traits = engine::engine_info(engine).traits;
  if (!traits.threads || traits.bytes_per_gpu_per_thread <= 0) return;
  const int extra = traits.threads(threads, gpus) - 1;
  if (extra > 0)
    e.parts.push_back({fmt::format("{} engine threads past the first ({} x {} GPUs)", engine, extra,
                                   thousands(static_cast<int64_t>(gpus))),
                       gpus * extra, traits.bytes_per_gpu_per_thread, "network.threads"});
}

void add_run(Estimate& e, const std::string& engine, double gpus, PlanSize plan, const std::string& shrink) {
  if (engine_bytes_per_gpu(engine) > 0)
    e.parts.push_back({engine + " engine state per GPU", gpus, engine_bytes_per_gpu(engine), "topology.gpus"});
  if (plan.flows > 0)
    e.parts.push_back({"point-to-point transfers on the " + engine + " engine", static_cast<double>(plan.flows),
                       bytes_per_flow(engine), shrink});
  if (plan.hops > 0)
    e.parts.push_back({"hops of rings and trees on the " + engine + " engine", static_cast<double>(plan.hops),
                       bytes_per_ring_hop(engine), shrink});
}

namespace {

// `so_far`: the estimate of a plan still growing, a lower bound ("at least").
void check_bytes(const Estimate& e, const std::string& what, bool so_far) {
  const double need = e.bytes();
  const auto lim = static_cast<double>(limit());
  if (need <= lim) return;
  std::string parts, shrink;
  for (const auto& p : e.parts) {
    if (!parts.empty()) parts += " + ";
    if (p.count == 1) parts += fmt::format("{} {}", p.what, mb(p.bytes()));
    else parts += fmt::format("{} {} x {:.0f} B", p.what, thousands(static_cast<int64_t>(p.count)), p.each);
    if (!p.shrink.empty() && p.bytes() >= need / 4 && shrink.find(p.shrink) == std::string::npos)
      shrink += (shrink.empty() ? "" : " or ") + p.shrink;
  }
  if (shrink.empty()) shrink = "the scenario";
  throw InputError(fmt::format("{} needs {} {} ({}), more than the memory limit of {} (--max-memory, "
                               "default half the machine's memory); shrink {}, or raise --max-memory",
                               what, so_far ? "at least" : "an estimated", mb(need), parts, mb(lim), shrink));
}

}  // namespace

void check(const Estimate& e, const std::string& what) { check_bytes(e, what, false); }

std::function<void(const plan::PlanWeight&)> growing_plan_guard(const Estimate& base, const std::string& engine,
                                                                double gpus, const std::string& shrink,
                                                                const std::string& what) {
  const double room =
      static_cast<double>(limit()) - base.bytes() - engine_bytes_per_gpu(engine) * gpus;  // left for the plan
  const double per_flow = bytes_per_flow(engine), per_hop = bytes_per_ring_hop(engine);
  return [=](const plan::PlanWeight& w) {
    if (static_cast<double>(w.flows) * per_flow + static_cast<double>(w.hops) * per_hop <= room) return;
    Estimate e = base;
    add_run(e, engine, gpus, w, shrink);
    check_bytes(e,
                fmt::format("{} ({} point-to-point transfers and {} hops built so far, and more to come)", what,
                            thousands(w.flows), thousands(w.hops)),
                true);
  };
}

}  // namespace podnet::scenario::estimate
