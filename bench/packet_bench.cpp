// packet_bench: throughput of the packet-level engine on a permutation.
//
// A 3-tier k-ary fat-tree of single-GPU, single-NIC servers (100 Gb/s NICs
// and switch ports, 4096-byte MTU; k = 16: 1,024 hosts, k = 32: 8,192 hosts).
// Every host sends `--bytes` (default 2 MB = 2,000,000 B) to a distinct host:
// a fixed-seed derangement (Sattolo's algorithm: one cycle through all
// hosts, so nobody sends to itself and every host receives exactly one
// flow). Congestion control: DCQCN (NIC preset) with PFC, or `--cc none`
// (line rate, PFC only). All flows must complete.
//
// Prints wall time, CPU time, peak memory (getrusage), data packets
// delivered, events, and data packets per CPU-second.
// Targets: >= 100,000 data packets per CPU-second and < 500 MB at k = 16.
//
// `--threads N` runs the partitioned engine (packet/partition.hpp) on N
// threads; its results are the same for every N, and the digest line (a
// hash of every flow's finish time and the totals) shows it. Under mpirun
// (`mpirun -n 2 packet_bench --threads 1`) the lanes spread over the ranks
// too; rank 0 prints, and its digest is the same.
//
//   packet_bench [--k 16] [--cc dcqcn_nic|dcqcn_paper|none|infiniband] [--routing ecmp|spray|adaptive]
//                [--bytes 2000000] [--seed 1] [--threads N]
#include "bench_util.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "core/mpi_world.hpp"
#include "core/rng.hpp"
#include "engine/packet/packet_backend.hpp"
#include "engine/packet/partition.hpp"
#include "engine/packet/ranks.hpp"
#include "topology/builders.hpp"

using namespace podnet;

namespace {

using podnet::bench::cpu_seconds;

double peak_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // Linux: kilobytes
}

// The speed-up a partitioned run would see on more threads, from this one-thread run (docs: "The
// partitioned engine"): T threads take the units as the engine assigns them; a window costs the busiest
// thread's events at this run's CPU per event, the events handed between threads once more (a mailbox
// push and a queue push: assumed one event's cost), and two barriers of b x log2(T) (a tree barrier; b
// measured here on 2 threads).
void project(const engine::packet::Partition& p, const engine::packet::SimStats& st, double cpu_run) {
  uint64_t events = 0, cross = 0;
  for (size_t u = 0; u < p.unit_events.size(); ++u) {
    events += p.unit_events[u];
    cross += p.unit_cross[u];
  }
  const double per_event = cpu_run / static_cast<double>(std::max<uint64_t>(1, events));
  // b: one barrier round (the engine's) on two threads, timed over 200,000 rounds.
  constexpr int kRounds = 200'000;
  engine::packet::SpinBarrier sync(2);
  const auto t0 = std::chrono::steady_clock::now();
  std::thread other([&] {
    for (int i = 0; i < kRounds; ++i) sync.arrive_and_wait();
  });
  for (int i = 0; i < kRounds; ++i) sync.arrive_and_wait();
  other.join();
  const double b = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / kRounds;
  std::printf("  projection: %llu events (%.0f ns each), %llu between units, %llu windows, barrier %.2f us on 2 "
              "threads\n",
              static_cast<unsigned long long>(events), per_event * 1e9, static_cast<unsigned long long>(cross),
              static_cast<unsigned long long>(st.windows), b * 1e6);
  std::printf("  %8s %12s %12s %12s %10s %9s\n", "threads", "busiest s", "handover s", "barriers s", "total s",
              "speed-up");
  for (int t = 1; t <= 256; t *= 2) {
    const auto lanes = engine::packet::Partition::assign(p.unit_ports, t);
    std::vector<uint64_t> load(static_cast<size_t>(t), 0);
    for (size_t u = 0; u < p.unit_ports.size(); ++u) load[static_cast<size_t>(lanes[u])] += p.unit_events[u];
    const double busiest = static_cast<double>(*std::max_element(load.begin(), load.end())) * per_event;
    const double handover = t > 1 ? static_cast<double>(cross) * (t - 1) / t / t * per_event : 0.0;
    const double barriers = t > 1 ? static_cast<double>(st.windows) * 2 * b * std::log2(static_cast<double>(t)) : 0.0;
    const double total = busiest + handover + barriers;
    std::printf("  %8d %12.2f %12.2f %12.2f %10.2f %8.1fx\n", t, busiest, handover, barriers, total, cpu_run / total);
  }
}

}  // namespace

int main(int argc, char** argv) {
  podnet::use_huge_pages(argv);                // as the podnet binary runs (core/process.hpp)
  const int ranks = podnet::mpi::join().size;  // under mpirun: the partitioned engine's ranks; rank 0 prints
  int k = 16;
  std::string cc = "dcqcn_nic", policy = "ecmp";
  Bytes bytes = 2'000'000;
  uint64_t seed = 1;
  int threads = 0;  // 0: the sequential engine
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::printf(
          "packet_bench: a permutation on a k-ary fat-tree at packet level (data packets per CPU second)\n"
          "usage: packet_bench [--k 16] [--cc dcqcn_nic|dcqcn_paper|none|infiniband] [--routing ecmp|spray|adaptive]\n"
          "                    [--bytes 2000000] [--seed 1] [--threads N]\n"
          "  --k K        fat-tree radix: K^3/4 hosts (16: 1,024; 32: 8,192)\n"
          "  --threads N  the partitioned engine on N threads (0: the sequential engine); the digest line is the\n"
          "               same for every N; with 1, a projection of the speed-up on more threads\n"
          "  mpirun -n R packet_bench --threads N: the partitions on R ranks of N threads; rank 0 prints\n");
      return 0;
    }
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--k") k = std::atoi(argv[i + 1]);
    else if (a == "--cc") cc = argv[i + 1];
    else if (a == "--routing") policy = argv[i + 1];
    else if (a == "--bytes") bytes = std::atoll(argv[i + 1]);
    else if (a == "--seed") seed = std::strtoull(argv[i + 1], nullptr, 10);
    else if (a == "--threads") threads = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "unknown option %s\n", argv[i]);
      return 2;
    }
  }

  const double cpu0 = cpu_seconds();
  const auto wall0 = std::chrono::steady_clock::now();

  topology::Hardware hw = topology::default_hardware();
  hw.gpus_per_server = 1;
  hw.nics_per_server = 1;
  hw.nvlink_domain = 1;
  hw.nic_speed = Bandwidth(100e9);
  hw.port_speed = Bandwidth(100e9);
  hw.radix = k;
  const topology::Topology topo = topology::build_with("fat_tree", {{"k", std::to_string(k)}}, hw);
  const auto n = static_cast<int32_t>(topo.gpus.size());

  // Sattolo: a uniformly random cyclic permutation, hence a derangement.
  std::vector<int32_t> dst(n);
  for (int32_t i = 0; i < n; ++i) dst[i] = i;
  Rng rng(seed);
  for (int32_t i = n - 1; i > 0; --i) std::swap(dst[i], dst[static_cast<int32_t>(rng.below(static_cast<uint64_t>(i)))]);

  plan::TransferPlan plan;
  plan.op = "permutation";
  for (int32_t s = 0; s < n; ++s) {
    plan::Transfer t;
    t.kind = plan::TransferKind::P2p;
    t.ranks = {s, dst[s]};
    t.bytes = bytes;
    plan.add(std::move(t));
  }
  engine::NetworkOptions net;
  net.routing.policy = policy;
  net.routing.seed = seed;
  engine::packet::PacketOptions popt;
  popt.cc = cc;
  popt.partitioned = threads > 0;
  popt.threads = std::max(1, threads);
  engine::packet::PacketBackend backend(topo, net, popt);
  const double cpu_setup = cpu_seconds() - cpu0;

  const double cpu1 = cpu_seconds();
  const engine::RunReport report = backend.run(plan);
  const double cpu_run = cpu_seconds() - cpu1;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  const double cpu = cpu_seconds() - cpu0;

  const auto& sim = *backend.last_run();
  const auto& st = sim.stats();
  double first = 1e300, last = 0;
  for (const auto& t : report.transfers) {
    first = std::min(first, t.finish.us());
    last = std::max(last, t.finish.us());
  }
  int64_t unfinished = 0;
  uint64_t digest = 0;
  for (const auto& t : report.transfers) {
    unfinished += t.finish.ps <= 0;
    digest = mix64(digest ^ static_cast<uint64_t>(t.finish.ps));
  }
  for (const uint64_t v : {st.events, st.data_sent, st.ecn_marks, st.cnps, st.pause_frames, st.retransmits})
    digest = mix64(digest ^ v);

  std::printf("packet_bench: k=%d fat-tree, %d hosts, %d flows of %lld B, cc=%s, routing=%s, seed=%llu, %s\n", k, n, n,
              static_cast<long long>(bytes), cc.c_str(), policy.c_str(), static_cast<unsigned long long>(seed),
              threads > 0 ? ("partitioned on " + std::to_string(threads) + " thread(s)" +
                             (ranks > 1 ? " on each of " + std::to_string(ranks) + " ranks" : ""))
                                .c_str()
                          : "sequential");
  if (threads > 0)
    std::printf("  partitioned: %d units, lookahead %.0f ns, %llu windows, %llu events clamped\n", st.units,
                st.lookahead.us() * 1e3, static_cast<unsigned long long>(st.windows),
                static_cast<unsigned long long>(st.clamped));
  std::printf("  simulated: makespan %.1f us, flow completion %.1f .. %.1f us, unfinished %lld\n", report.makespan.us(),
              first, last, static_cast<long long>(unfinished));
  std::printf("  data packets delivered %llu (sent %llu, retransmitted %llu), events %llu, peak packets %llu\n",
              static_cast<unsigned long long>(st.data_delivered), static_cast<unsigned long long>(st.data_sent),
              static_cast<unsigned long long>(st.retransmits), static_cast<unsigned long long>(st.events),
              static_cast<unsigned long long>(st.peak_packets));
  std::printf("  drops %llu, ECN marks %llu, CNPs %llu, PAUSE frames %llu, timeouts %llu, max reorder %u packets\n",
              static_cast<unsigned long long>(st.drops), static_cast<unsigned long long>(st.ecn_marks),
              static_cast<unsigned long long>(st.cnps), static_cast<unsigned long long>(st.pause_frames),
              static_cast<unsigned long long>(st.timeouts), st.max_reorder_packets);
  std::printf("  wall %.2f s, CPU %.2f s (setup %.2f s, run %.2f s), peak memory %.1f MB\n", wall, cpu, cpu_setup,
              cpu_run, peak_mb());
  std::printf("  %.0f data packets per CPU-second (run), %.0f overall; %.0f events per CPU-second\n",
              static_cast<double>(st.data_delivered) / cpu_run, static_cast<double>(st.data_delivered) / cpu,
              static_cast<double>(st.events) / cpu_run);
  std::printf("  digest %016llx\n", static_cast<unsigned long long>(digest));
  if (const auto* part = sim.partition(); part != nullptr && ranks > 1) {
    // A window's end across ranks with nothing to send (the engine's two collectives), timed over 20,000
    // rounds: the fixed cost a window pays for ranks, besides waiting for the slowest.
    std::vector<engine::packet::ranks::Status> all;
    std::vector<std::vector<engine::packet::ranks::Wire>> out(static_cast<size_t>(ranks));
    std::vector<engine::packet::ranks::Wire> in;
    constexpr int kRounds = 20000;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kRounds; ++i) engine::packet::ranks::exchange({}, all, out, in);
    const double round_us =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() * 1e6 / kRounds;
    std::printf("  ranks: %d; an empty window end %.2f us; rank 0 sent %llu events (%.1f MB) in %llu windows\n", ranks,
                round_us, static_cast<unsigned long long>(part->sent),
                static_cast<double>(part->sent * sizeof(engine::packet::ranks::Wire)) / 1e6,
                static_cast<unsigned long long>(st.windows));
  }
  if (const auto* part = sim.partition(); part != nullptr && threads == 1 && ranks == 1) project(*part, st, cpu_run);
  return unfinished == 0 && sim.open_streams() == 0 ? 0 : 1;
}
