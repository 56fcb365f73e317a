// Checkpoints on the frontend network, timed by hand on an idle fabric: bytes over the bottleneck's payload
// rate. RoCEv2's payload share of a 100 Gb/s link: 4096 / (4096 + 82) B a packet (engine/network.hpp), so
// a 100G port moves 12.5e9 x 4096 / 4178 B/s.
#include "study/frontend_io.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "engine/registry.hpp"
#include "topology/builders.hpp"

namespace podnet::study {
namespace {

constexpr double kPort = 12.5e9 * 4096 / 4178;  // payload bytes/s of a 100G RoCEv2 port
const engine::NetworkOptions kDefaults;         // the network: section's defaults

// 4 servers x `nics` NICs and `nodes` storage nodes x 1 NIC at 100G on one radix-32 leaf (16 down-ports).
topology::FrontendFabric fabric(int32_t nodes, double write_Bps = 0, int32_t nics = 1) {
  topology::FrontendConfig c;
  c.nics = nics;
  c.nic_speed = c.port_speed = Bandwidth(100e9);
  c.radix = 32;
  c.storage_nodes = nodes;
  c.storage_nics = 1;
  c.storage_write_Bps = write_Bps;
  return topology::build_frontend(c, 4, topology::default_hardware());
}

TEST(FrontendCheckpoint, OneStoragePortBoundsTheWriteAndTheRead) {
  // 4 GB from 4 clients into one storage NIC: 4e9 / kPort, in both directions.
  const FrontendIo io = simulate_checkpoint(fabric(1), 4e9, 4, "flow", kDefaults);
  EXPECT_EQ(io.flows, 4);
  EXPECT_NEAR(io.write.seconds, 4e9 / kPort, 1e-4 * io.write.seconds);
  EXPECT_NEAR(io.read.seconds, 4e9 / kPort, 1e-4 * io.read.seconds);
  EXPECT_EQ(io.write.bound, "the storage nodes' NICs");
  EXPECT_NEAR(io.write.gbyte_per_s, kPort / 1e9, 1e-4 * kPort / 1e9);
}

TEST(FrontendCheckpoint, StripesSpreadEveryClientOverTheStoragePorts) {
  // 2 storage ports, 8 stripes: each client writes 1 GB in two flows of 0.5 GB, one to each port; a port
  // takes 4 x 0.5 GB = 2 GB at kPort while a client NIC sends 1 GB at kPort: the storage NICs bound it.
  const FrontendIo io = simulate_checkpoint(fabric(2), 4e9, 4, "flow", kDefaults);
  EXPECT_EQ(io.flows, 8);
  EXPECT_NEAR(io.write.seconds, 2e9 / kPort, 1e-4 * io.write.seconds);
  // Only the first 2 servers checkpoint (a job on half the servers): 2 GB from 2 clients, 1 GB a port, and
  // each client NIC sends 1 GB too: both ends are the bound.
  const FrontendIo half = simulate_checkpoint(fabric(2), 2e9, 2, "flow", kDefaults);
  EXPECT_NEAR(half.write.seconds, 1e9 / kPort, 1e-4 * half.write.seconds);
  EXPECT_EQ(half.write.bound, "the servers' frontend NICs and the storage nodes' NICs");
}

TEST(FrontendCheckpoint, TheStorageMediaBoundWhenSlowerThanItsNics) {
  // 5 GB/s of media behind a 100G NIC: the write takes 4e9 / 5e9 = 0.8 s; the read, unbounded, 4e9 / kPort.
  const FrontendIo io = simulate_checkpoint(fabric(1, 5e9), 4e9, 4, "flow", kDefaults);
  EXPECT_NEAR(io.write.seconds, 0.8, 1e-4 * 0.8);
  EXPECT_EQ(io.write.bound, "the storage nodes' media");
  EXPECT_NEAR(io.read.seconds, 4e9 / kPort, 1e-4 * io.read.seconds);
}

TEST(FrontendCheckpoint, OversubscribedUplinksBoundATrafficThatCrossesThem) {
  // Radix 8 at 3:1: 6 down-ports and 2 up per leaf. 12 server ports fill leaves 0-1, the 6 storage ports
  // leaf 2. Every write crosses a leaf's 2 x 100G uplinks: 12 clients x 1 GB = 12 GB leave two leaves through
  // 4 uplinks (3 GB each) and enter the storage leaf through its 2 (6 GB each): 6e9 / kPort.
  topology::FrontendConfig c;
  c.nics = 1;
  c.nic_speed = c.port_speed = Bandwidth(100e9);
  c.radix = 8;
  c.oversubscription = 3;
  c.storage_nodes = 6;
  c.storage_nics = 1;
  c.stripes = 6;
  const auto f = topology::build_frontend(c, 12, topology::default_hardware());
  engine::NetworkOptions o;
  o.routing.policy = "spray";  // the uplinks share the load evenly (ECMP would hash flows unevenly)
  const FrontendIo io = simulate_checkpoint(f, 12e9, 12, "flow", o);
  EXPECT_NEAR(io.write.seconds, 6e9 / kPort, 1e-3 * io.write.seconds);
  EXPECT_EQ(io.write.bound, "the frontend's leaf-spine links");
}

TEST(FrontendCheckpoint, TwoNicsPerServerShareTheServersBytes) {
  // 4 servers x 2 NICs into one storage NIC: 8 flows of 0.5 GB, still 4e9 / kPort through that NIC.
  const FrontendIo io = simulate_checkpoint(fabric(1, 0, 2), 4e9, 4, "flow", kDefaults);
  EXPECT_EQ(io.flows, 8);
  EXPECT_NEAR(io.write.seconds, 4e9 / kPort, 1e-4 * io.write.seconds);
  EXPECT_EQ(io.write.bound, "the storage nodes' NICs");
}

TEST(FrontendDataLoading, TheFirstAndLastStagesTpRankZeroRead) {
  // tp 2, pp 2, dp 2 on 8 GPUs, 2 per server, placed in rank order: rank = tp_rank + 2 (replica + 2 stage),
  // so the readers (tp rank 0 of stages 0 and 1) are ranks 0, 2, 4, 6 on servers 0-3. Each reads its
  // replica's 8 / 2 = 4 samples: 1,000 B each on stage 0 (servers 0, 1), their 10 B labels on stage 1.
  topology::Hardware hw = topology::default_hardware();
  hw.gpus_per_server = 2;
  hw.nics_per_server = 2;
  const auto t = topology::build_with("rail_clos", {{"gpus", "8"}}, hw);
  workload::Job job;
  job.tp = 2;
  job.pp = 2;
  job.dp = 2;
  job.global_batch = 8;
  const std::vector<int32_t> gpus = {0, 1, 2, 3, 4, 5, 6, 7};
  EXPECT_EQ(data_loading_bytes(job, gpus, t, 1000, 10), (std::vector<double>{4000, 4000, 40, 40}));
  // Without pipelining only stage 0 reads: tp 2, dp 4, ranks 0, 2, 4, 6 again, 2 samples each.
  job.pp = 1;
  job.dp = 4;
  EXPECT_EQ(data_loading_bytes(job, gpus, t, 1000, 10), (std::vector<double>{2000, 2000, 2000, 2000}));
  // tp 4 fills a pair of servers: ranks 0 and 4 read, on servers 0 and 2.
  job.tp = 4;
  job.dp = 2;
  EXPECT_EQ(data_loading_bytes(job, gpus, t, 1000, 10), (std::vector<double>{4000, 0, 4000, 0}));
}

TEST(FrontendDataLoading, ReadersShareTheStoragePort) {
  // Servers 0 and 2 read 1 GB each through the one storage NIC: 2e9 / kPort; servers 1 and 3 idle.
  const DataLoading d = simulate_data_loading(fabric(1), {1e9, 0, 1e9, 0}, 1000, "flow", kDefaults);
  EXPECT_EQ(d.servers, 2);
  EXPECT_EQ(d.flows, 2);
  EXPECT_DOUBLE_EQ(d.bytes, 2e9);
  EXPECT_NEAR(d.read.seconds, 2e9 / kPort, 1e-4 * d.read.seconds);
  EXPECT_EQ(d.read.bound, "the storage nodes' NICs");
}

// Storage on the back end (frontend.converged): 4 servers of 1 GPU and one 100G NIC on one radix-32 leaf;
// the last server slot is the storage node, so servers 0-2 write into its one NIC.
topology::FrontendFabric converged(const topology::Topology& back) {
  topology::FrontendConfig c;
  c.converged = true;
  c.storage_nodes = 1;
  return topology::build_converged(c, back);
}

topology::Topology small_back_end() {
  topology::Hardware hw = topology::default_hardware();
  hw.gpus_per_server = 1;
  hw.nics_per_server = 1;
  hw.nvlink_domain = 1;
  hw.nic_speed = hw.port_speed = Bandwidth(100e9);
  hw.radix = 32;
  return topology::build_with("fat_tree", {{"gpus", "4"}}, hw);
}

plan::TransferPlan one_send(int32_t from, int32_t to, double bytes) {
  plan::TransferPlan p;
  plan::Transfer t;
  t.ranks = {from, to};
  t.bytes = static_cast<Bytes>(bytes);
  p.add(t);
  return p;
}

TEST(ConvergedStorage, TheCheckpointRunsOnTheBackEnd) {
  // 3 GB from 3 servers into the storage slot's one NIC: 3e9 / kPort.
  const topology::Topology back = small_back_end();
  const topology::FrontendFabric f = converged(back);
  ASSERT_EQ(f.servers, 3);
  EXPECT_EQ(f.rank_of(f.storage_port(0, 0)), 3);
  const FrontendIo io = simulate_checkpoint(f, 3e9, 3, "flow", kDefaults);
  EXPECT_NEAR(io.write.seconds, 3e9 / kPort, 1e-4 * io.write.seconds);
  EXPECT_EQ(io.write.bound, "the storage nodes' NICs");
}

TEST(ConvergedStorage, AWriteSharingTrainingsLinkHalvesBoth) {
  // Training sends 1 GB from GPU 0 to GPU 1 while server 0 writes 4 GB to the storage slot (GPU 3): both
  // leave through server 0's NIC, so max-min gives each kPort / 2. The send takes 2 x 1e9 / kPort (slowdown
  // 2); the write moves 1 GB meanwhile, then 3 GB alone at kPort. The estimate: during = 4 - 3 = 1 GB in
  // 2e9 / kPort, r = kPort / 2, so behind such iterations the write takes 4e9 / (kPort / 2): twice its time alone.
  const topology::Topology back = small_back_end();
  const topology::FrontendFabric f = converged(back);
  const WriteBehindTraining w = write_behind_training(f, one_send(0, 1, 1e9), {4e9, 0, 0}, "flow", kDefaults);
  EXPECT_NEAR(w.iteration_alone_s, 1e9 / kPort, 1e-3 * w.iteration_alone_s);
  EXPECT_NEAR(w.slowdown, 2.0, 2e-3);
  EXPECT_NEAR(w.write_alone_s, 4e9 / kPort, 1e-3 * w.write_alone_s);
  EXPECT_TRUE(w.outlasts);
  EXPECT_NEAR(w.write_s / w.write_alone_s, 2.0, 4e-3);
  EXPECT_EQ(w.flows, 1);
  // Training between servers 1 and 2 shares no link with the write: neither slows.
  const WriteBehindTraining apart = write_behind_training(f, one_send(1, 2, 1e9), {4e9, 0, 0}, "flow", kDefaults);
  EXPECT_NEAR(apart.slowdown, 1.0, 1e-9);
  EXPECT_NEAR(apart.write_s, apart.write_alone_s, 1e-9 * apart.write_alone_s);
}

TEST(ConvergedStorage, RefusesWhatCannotHoldIt) {
  const topology::Topology back = small_back_end();
  topology::FrontendConfig c;
  c.converged = true;
  c.storage_nodes = 4;  // every server slot
  EXPECT_THROW(topology::build_converged(c, back), ParamError);
}

TEST(FrontendCheckpoint, ThePacketEngineHandsTerabytesToTheFlowEngine) {
  const FrontendIo io = simulate_checkpoint(fabric(1), 4e9, 4, "packet", kDefaults);
  EXPECT_EQ(io.engine, "flow");
}

}  // namespace
}  // namespace podnet::study
