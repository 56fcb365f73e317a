// diagnose_bench: how fast one `podnet diagnose --evaluate` trial runs on
// aipod-16k (16,384 NICs, rail mesh: 4 targets x 8 UDP ports per NIC =
// 524,288 probe tuples, 1,000 probes/s per NIC for 5 simulated minutes in
// 10 s rounds): the mesh (routing every tuple both ways), one trial's
// probing, and one trial's 30 localizations, each timed, with the peak
// resident memory and the trial's result (so a speed-up that changes the
// answer shows). Target (issue): one trial under 10 s on 2 cores.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <set>

#include "core/process.hpp"
#include "diagnose/localize.hpp"
#include "diagnose/probe.hpp"
#include "routing/router.hpp"
#include "scenario/scenario.hpp"
#include "scenario/setup.hpp"

namespace {

using namespace podnet;
using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

}  // namespace

int main(int /*argc*/, char** argv) {
  podnet::use_huge_pages(argv);  // as the podnet binary runs (core/process.hpp)
  podnet::keep_freed_memory();   // as the podnet binary runs (core/process.hpp)
  std::printf("diagnose_bench: one evaluation trial on aipod-16k (rail mesh, 1,000 probes/s per NIC, 300 s)\n");
  const scenario::Setup s = scenario::resolve(scenario::load("aipod-16k"));
  routing::Router router(s.fabric, s.network.routing);
  diagnose::ProbeOptions o;
  auto t0 = Clock::now();
  const diagnose::Mesh mesh = diagnose::build_mesh(s.fabric, router, o, s.scenario.seed);
  const diagnose::Incidence inc = diagnose::incidence_of(s.fabric, mesh);
  const double mesh_s = since(t0);
  // One hidden fault: the first switch-to-switch direction some probe crosses, at 0.1 % loss.
  diagnose::Fault f;
  f.probability = 1e-3;
  for (int32_t d : mesh.links)
    if (diagnose::switch_entered(s.fabric, d) != topology::kNone &&
        s.fabric.nodes[routing::dir_from(d, s.fabric)].kind == topology::NodeKind::Switch) {
      f.dirs = {d};
      break;
    }
  t0 = Clock::now();
  const diagnose::ProbeRun run = diagnose::simulate_probes(s.fabric, mesh, {f}, o, 7);
  const double probe_s = since(t0);
  t0 = Clock::now();
  std::vector<int64_t> sent(mesh.tuples.size(), 0), lost(mesh.tuples.size(), 0);
  diagnose::Localization loc;
  int first_right = -1;
  for (int r = 0; r < run.rounds; ++r) {
    for (size_t i = 0; i < sent.size(); ++i) sent[i] += run.sent_per_round[i];
    for (const auto& x : run.lost_by_round[r]) lost[x.tuple] += x.lost;
    loc = diagnose::localize(inc, sent, lost);
    const bool right = loc.suspects.size() == 1 && loc.suspects[0].component == f.dirs[0];
    if (right && first_right < 0) first_right = r;
    if (!right) first_right = -1;
  }
  const double localize_s = since(t0);
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  const double trial = probe_s + localize_s;
  std::printf("  mesh      %7.3f s  (%zu tuples, %lld of %lld link directions covered; once per evaluation)\n", mesh_s,
              mesh.tuples.size(), static_cast<long long>(mesh.covered_dirs), static_cast<long long>(mesh.network_dirs));
  std::printf("  probing   %7.3f s  (%d rounds, %lld probes lost)\n", probe_s, run.rounds,
              static_cast<long long>(loc.lost));
  std::printf("  localize  %7.3f s  (%d localizations; found: %s, from round %d)\n", localize_s, run.rounds,
              first_right >= 0 ? "yes" : "NO", first_right + 1);
  std::printf("  trial     %7.3f s  peak %.1f MB  | target < 10 s: %s\n", trial,
              static_cast<double>(u.ru_maxrss) / 1024.0, trial < 10 ? "met" : "MISSED");
  return 0;
}
