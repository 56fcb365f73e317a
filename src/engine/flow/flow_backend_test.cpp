// The flow backend's guard on what an observed run records (options.hpp,
// NetworkOptions::memory_limit): the link-load step record stops the run with
// an InputError, naming --max-memory, instead of growing past the limit.
#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"
#include "engine/registry.hpp"
#include "engine/test_util.hpp"
#include "topology/test_util.hpp"

namespace podnet::engine {
namespace {

using testing::p2p_plan;
using topology::testing::hw_with;

topology::Topology fabric() {
  return topology::build_with("fat_tree", {{"gpus", "8"}, {"tiers", "2"}}, hw_with(1, 1, 8));
}

TEST(FlowBackend, ObservedRunStopsWhenItsRecordPassesTheMemoryLimit) {
  const topology::Topology t = fabric();
  // GPU 0 -> 1 moves 1 MiB: its links' loads step up when it starts and down when it ends, so the
  // record needs at least 2 steps.
  const plan::TransferPlan plan = p2p_plan({{0, 1}}, Bytes{1} << 20);
  NetworkOptions o;
  size_t steps = 0;
  o.observe = [&](const RunObservation& r) { steps = r.link_steps ? r.link_steps->size() : 0; };
  // No limit: the run records its steps.
  make_backend("flow", t, o)->run(plan);
  EXPECT_GE(steps, 2u);
  // A limit of 1 byte is below what the process already holds: no room, a cap of 1 step.
  o.memory_limit = 1;
  try {
    make_backend("flow", t, o)->run(plan);
    ADD_FAILURE() << "the observed run passed its memory limit";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("reached 1 steps"), std::string::npos) << what;
    EXPECT_NE(what.find("--max-memory"), std::string::npos) << what;
  }
  // Unobserved, the same limit records nothing and the run goes through.
  o.observe = nullptr;
  EXPECT_GT(make_backend("flow", t, o)->run(plan).makespan.ps, 0);
}

}  // namespace
}  // namespace podnet::engine
