#include "study/calibrate.hpp"

#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"

namespace podnet::study {
namespace {

NcclTestsLog log_on(int hosts, int per_host) {
  NcclTestsLog l;
  l.source = "t.log";
  l.test = "all_reduce";
  for (int h = 0; h < hosts; ++h)
    for (int g = 0; g < per_host; ++g)
      l.ranks.push_back({h * per_host + g, 0, 0, "host" + std::to_string(h), g, "gpu"});
  l.rows.push_back({});
  l.rows.back().bytes = 1 << 20;
  l.rows.back().out_of_place = {true, 100.0, 0, 0};
  l.avg_busbw_gbyte_per_s = 1;  // a whole log ends its table with its average (a log cut short does not)
  return l;
}

TEST(Calibrate, DefaultKeysFollowTheLogsLayout) {
  // NCCL's model (the default): the links' payload share, which leaves NCCL's choices as they are; across
  // servers the NIC class's first (RoCE here), and the engines' stack latency only for the untuned all-to-all.
  const scenario::Scenario tuned = scenario::load("leafspine-8k", {"topology.gpus=64"});
  EXPECT_EQ(default_fit_keys({log_on(1, 8)}, tuned, ""), (std::vector<std::string>{"links.nvlink_efficiency"}));
  EXPECT_EQ(default_fit_keys({log_on(1, 8), log_on(2, 8)}, tuned, ""),
            (std::vector<std::string>{"links.ethernet_efficiency", "links.nvlink_efficiency"}));
  NcclTestsLog a2a = log_on(2, 8);
  a2a.test = "alltoall";
  EXPECT_EQ(default_fit_keys({a2a}, tuned, ""),
            (std::vector<std::string>{"links.ethernet_efficiency", "links.nvlink_efficiency",
                                      "network.stack_latency"}));
  const scenario::Scenario ib = scenario::load("leafspine-8k", {"topology.gpus=64", "network.transport=infiniband"});
  EXPECT_EQ(default_fit_keys({log_on(2, 8)}, ib, "").front(), "links.infiniband_efficiency");
  // The plain algorithm (collective.nccl_model false): the speeds and the engines' latencies.
  const scenario::Scenario plain = scenario::load("leafspine-8k", {"topology.gpus=64", "collective.nccl_model=false"});
  EXPECT_EQ(default_fit_keys({log_on(1, 8)}, plain, ""),
            (std::vector<std::string>{"server.nvlink_bandwidth", "server.nvlink_latency"}));
  EXPECT_EQ(default_fit_keys({log_on(1, 8), log_on(2, 8)}, plain, ""),
            (std::vector<std::string>{"server.nic_speed", "network.stack_latency"}));
}

TEST(Calibrate, RefusesLogsThatDoNotFitTheScenario) {
  CalibrationInput in;
  in.scenario = "leafspine-8k";
  in.sets = {"topology.gpus=64"};
  in.engine = "analytical";
  in.logs = {log_on(9, 8)};  // 9 hosts; the scenario has 64 / 8 = 8 servers
  try {
    calibrate(in);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "t.log: the log ran on 9 hosts, but the scenario has 8 servers: expected a "
                                     "scenario of at least 72 GPUs (--set topology.gpus=72)");
  }
  in.logs = {log_on(2, 8)};
  in.logs[0].test = "hypercube";
  EXPECT_THROW(calibrate(in), InputError);
  in.logs = {log_on(2, 8)};
  in.fit = {"server.nic_speed=400Gbps"};  // no ':'
  EXPECT_THROW(calibrate(in), InputError);
  in.fit = {"server.nic_speed", "server.nic_speed"};
  EXPECT_THROW(calibrate(in), InputError);
  in.fit = {};
  in.engine = "packet";  // hundreds of packet-level runs: refused
  EXPECT_THROW(calibrate(in), InputError);
}

// A time alone cannot place a one-key fit outside its bounds: a log 1000x slower than anything the NIC range
// allows pins server.nic_speed at the lower bound (400 Gbps / 8 = 50 Gbps), and the fragment says so.
TEST(Calibrate, StaysInsideTheBoundsAndWritesAFragment) {
  CalibrationInput in;
  in.scenario = "leafspine-8k";
  in.sets = {"topology.gpus=64", "collective.nccl_model=false", "collective.channels=1"};  // the plain ring
  in.engine = "analytical";
  in.fit = {"server.nic_speed"};
  in.logs = {log_on(2, 8)};
  in.logs[0].rows[0].out_of_place.time_us = 1e6;  // 1 s for 1 MiB
  const Calibration c = calibrate(in);
  ASSERT_EQ(c.keys.size(), 1u);
  EXPECT_NEAR(c.keys[0].value / 50e9, 1.0, 1e-3);
  EXPECT_EQ(c.keys[0].lo, 50e9);
  EXPECT_EQ(c.keys[0].hi, 800e9);
  ASSERT_EQ(c.rows.size(), 1u);
  // Still far too fast, and the residual shows it: a ring all-reduce of 1 MiB on 16 ranks sends
  // 2 x 15/16 x 1,048,576 = 1,966,080 B per rank through the NIC at 50 Gbps x 4096/4178 (rocev2 wire efficiency)
  // = 6.127 GB/s: 320.9 us plus the latencies (30 steps of a few us), well under 1,000 us. podnet / log busbw =
  // t_log / t_podnet is then between 1e6 / 1000 = 1000 and 1e6 / 320.9 = 3116.
  EXPECT_GT(c.rows[0].ratio, 1000.0);
  EXPECT_LT(c.rows[0].ratio, 3116.0);
  const std::string y = fragment_yaml(c, in);
  EXPECT_NE(y.find("server:\n  nic_speed: 50."), std::string::npos) << y;
  EXPECT_NE(y.find("# was 400.000000Gbps"), std::string::npos) << y;
  // ... and says it: the value sits at its lower bound (the log wants a slower NIC than the range allows).
  ASSERT_EQ(c.notes.size(), 1u);
  EXPECT_NE(c.notes[0].find("server.nic_speed fitted at its lower bound"), std::string::npos) << c.notes[0];
  // Widening it names the other fitted keys too (--fit replaces the default keys); here there are none.
  EXPECT_NE(c.notes[0].find("widen it (--fit server.nic_speed=LO:HI)"), std::string::npos) << c.notes[0];
  EXPECT_NE(y.find("# note: server.nic_speed fitted at its lower bound"), std::string::npos) << y;
}

TEST(Calibrate, SaysWhatItCannotFit) {
  CalibrationInput in;
  in.scenario = "leafspine-8k";
  in.sets = {"topology.gpus=64"};
  in.engine = "analytical";
  // A key that changes no collective's time (a price): every value gives the same fit; it keeps its start.
  in.fit = {"cost.nic"};
  in.logs = {log_on(2, 8)};
  Calibration c = calibrate(in);
  ASSERT_EQ(c.keys.size(), 1u);
  EXPECT_EQ(c.keys[0].value, c.keys[0].start);
  ASSERT_EQ(c.notes.size(), 1u);
  EXPECT_NE(c.notes[0].find("cost.nic changed no time of these logs"), std::string::npos) << c.notes[0];
  // Two keys and one size: underdetermined.
  in.fit = {"links.ethernet_efficiency", "links.nvlink_efficiency"};
  c = calibrate(in);
  bool said = false;
  for (const auto& n : c.notes) said = said || n.find("2 keys fitted to 1 size:") != std::string::npos;
  EXPECT_TRUE(said);
  // One rank: nccl-tests' busbw is 0 (a bus factor of 0), nothing to fit; it used to write rms -nan.
  in.fit = {};
  in.logs = {log_on(1, 1)};
  try {
    calibrate(in);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("t.log: one rank"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace podnet::study
