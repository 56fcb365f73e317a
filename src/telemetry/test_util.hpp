// Test helper shared by the telemetry and study tests: a packet simulation
// run and handed to a Recorder as the packet backend hands it.
#pragma once

#include <algorithm>

#include "engine/backend.hpp"
#include "engine/packet/packet_sim.hpp"
#include "engine/packet/packet_test_util.hpp"
#include "telemetry/recorder.hpp"

namespace podnet::telemetry::testing {

// Runs `sim` and feeds it to a recorder as the packet backend would.
inline Recorder record(const topology::Topology& t, engine::packet::PacketSim& sim) {
  engine::packet::testing::run(sim);
  Recorder r(t);
  engine::RunReport rep;  // the run's length: its last stream's finish, as the backend reports it
  for (const auto& q : sim.streams()) rep.makespan = std::max(rep.makespan, q.finish);
  engine::RunObservation o;
  o.engine = "packet";
  o.report = &rep;
  o.packet = &sim;
  r.observe(o);
  return r;
}

}  // namespace podnet::telemetry::testing
