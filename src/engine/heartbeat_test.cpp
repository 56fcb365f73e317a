// NetworkOptions::observers.heartbeat: the engines call it every heartbeat_every events
// (a count, so results cannot depend on it), and a throw from it stops the
// run: how the dashboard's cancel and time limit reach a single long transfer,
// which finishes no transfer (and so reaches no progress hook) for minutes.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "engine/packet/packet_test_util.hpp"
#include "engine/registry.hpp"
#include "engine/test_util.hpp"

namespace podnet::engine {
namespace {

struct Stop : std::runtime_error {
  Stop() : std::runtime_error("stop") {}
};

// One 4 MiB transfer across a 4-host leaf: ~2,900 data packets of 1,500 B, each an arrival and a departure
// at the NIC, the leaf and the receiving NIC, plus ACKs: tens of thousands of events, and one transfer.
plan::TransferPlan one_transfer() { return testing::p2p_plan({{0, 1}}, Bytes(4 << 20)); }

TEST(Heartbeat, EveryEngineBeatsAndTheResultDoesNotDependOnIt) {
  const topology::Topology t = packet::testing::one_leaf(4);
  for (const char* engine : {"packet", "flow", "analytical"}) {
    NetworkOptions quiet = packet::testing::net();
    const RunReport a = make_backend(engine, t, quiet)->run(one_transfer());
    NetworkOptions watched = quiet;
    int beats = 0;
    Time last;
    watched.observers.heartbeat = [&](Time now) {
      ++beats;
      last = now;
    };
    watched.observers.heartbeat_every = 256;
    const RunReport b = make_backend(engine, t, watched)->run(one_transfer());
    EXPECT_GT(beats, 0) << engine;
    EXPECT_EQ(a.makespan, b.makespan) << engine;
    // The simulated time so far (the analytical engine has no clock: 0).
    if (std::string(engine) != "analytical") EXPECT_GT(last, Time(0)) << engine;
  }
}

TEST(Heartbeat, AThrowFromItStopsALongRunBeforeItEnds) {
  const topology::Topology t = packet::testing::one_leaf(4);
  NetworkOptions o = packet::testing::net();
  const Time full = make_backend("packet", t, o)->run(one_transfer()).makespan;
  Time stopped_at;
  o.observers.heartbeat = [&](Time now) {
    if (now > Time(0)) {
      stopped_at = now;
      throw Stop();
    }
  };
  o.observers.heartbeat_every = 1024;
  EXPECT_THROW(make_backend("packet", t, o)->run(one_transfer()), Stop);
  EXPECT_GT(stopped_at, Time(0));
  EXPECT_LT(stopped_at, full);  // stopped inside the one transfer, not after it
}

}  // namespace
}  // namespace podnet::engine
