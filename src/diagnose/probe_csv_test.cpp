#include "diagnose/probe_csv.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "core/error.hpp"
#include "routing/router.hpp"
#include "topology/builders.hpp"
#include "topology/test_util.hpp"

namespace podnet::diagnose {
namespace {

using topology::Topology;

Topology fat_tree4() {
  return topology::build_with("fat_tree", {{"k", "4"}},
                              topology::testing::hw_with(1, 1, topology::default_hardware().radix));
}

routing::RouteOptions policy(const char* p) {
  routing::RouteOptions o;
  o.policy = p;
  return o;
}

struct Sim {
  Topology t = fat_tree4();
  Mesh mesh;
  ProbeRun run;
  std::string csv;
};

Sim simulate(const std::vector<Fault>& faults) {
  Sim s;
  routing::Router r(s.t, policy("ecmp"));
  ProbeOptions o;
  o.mesh = "full-mesh";
  o.rate = 10000;
  o.round = Time::from_seconds(1);
  o.duration = Time::from_seconds(10);
  s.mesh = build_mesh(s.t, r, o, 1);
  s.run = simulate_probes(s.t, s.mesh, faults, o, 2);
  std::ostringstream out;
  write_probe_csv(out, s.t, s.mesh, s.run);
  s.csv = out.str();
  return s;
}

std::string error_of(const std::string& text, const Topology& t) {
  routing::Router spray(t, policy("spray"));
  try {
    read_probe_csv(text, "p.csv", t, spray);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(ProbeCsv, RoundTripLocalizesTheSame) {
  Sim s0 = simulate({});
  // An edge switch's uplink: the first switch-to-switch direction of a tuple leaving its edge switch.
  Fault f;
  for (const Tuple& tu : s0.mesh.tuples)
    if (tu.return_begin - tu.path_begin > 2) {
      f.dirs = {s0.mesh.links[tu.path_begin + 1]};
      break;
    }
  f.probability = 0.002;
  Sim s = simulate({f});
  routing::Router spray(s.t, policy("spray"));
  const ProbeTable table = read_probe_csv(s.csv, "p.csv", s.t, spray);
  EXPECT_EQ(table.rows, static_cast<int64_t>(s.mesh.tuples.size()));
  EXPECT_EQ(table.rows_without_path, 0);
  std::vector<int64_t> sent, lost;
  for (const auto& x : s.run.total) {
    sent.push_back(x.sent);
    lost.push_back(x.lost);
  }
  const Localization a = localize(incidence_of(s.t, s.mesh), sent, lost);
  const Localization b = localize(table.incidence, table.sent, table.lost);
  ASSERT_EQ(a.suspects.size(), 1u);
  ASSERT_EQ(b.suspects.size(), 1u);
  EXPECT_EQ(a.suspects[0].component, f.dirs[0]);
  EXPECT_EQ(b.suspects[0].component, f.dirs[0]);
  EXPECT_EQ(a.suspects[0].tied, 0);
  EXPECT_DOUBLE_EQ(a.suspects[0].loss, b.suspects[0].loss);
}

TEST(ProbeCsv, WithoutPathsANicLinkIsStillFound) {
  // Every route from a NIC starts on its own link, so spreading a row over the ECMP DAG still pins a NIC's
  // uplink: weight 1 on every row from that NIC.
  Sim s0 = simulate({});
  Fault f;
  f.dirs = {s0.mesh.links[s0.mesh.tuples[0].path_begin]};
  f.probability = 0.002;
  Sim s = simulate({f});
  std::string bare = "src,dst,sent,lost\n";
  for (size_t i = 0; i < s.mesh.tuples.size(); ++i)
    bare += s.t.nodes[s.mesh.tuples[i].src].name + "," + s.t.nodes[s.mesh.tuples[i].dst].name + "," +
            std::to_string(s.run.total[i].sent) + "," + std::to_string(s.run.total[i].lost) + "\n";
  routing::Router spray(s.t, policy("spray"));
  const ProbeTable table = read_probe_csv(bare, "p.csv", s.t, spray);
  EXPECT_EQ(table.rows_without_path, table.rows);
  const Localization loc = localize(table.incidence, table.sent, table.lost);
  ASSERT_FALSE(loc.suspects.empty());
  // Round-trip probes cross both directions of a NIC's link on every probe from or to it: the two are alike,
  // and the suspect names the link (either direction), with the other as its one look-alike.
  EXPECT_EQ(loc.suspects[0].component >> 1, f.dirs[0] >> 1);
  EXPECT_EQ(loc.suspects[0].alike, std::vector<int32_t>{loc.suspects[0].component ^ 1});
}

TEST(ProbeCsv, BadFilesNameLineAndColumn) {
  const Topology t = fat_tree4();
  const std::string a = t.nodes[t.nics[0]].name, b = t.nodes[t.nics[1]].name;
  const std::string head = "src,dst,sent,lost\n";
  EXPECT_NE(error_of("", t).find("p.csv: no header line"), std::string::npos);
  EXPECT_NE(error_of(head, t).find("no probe rows"), std::string::npos);
  EXPECT_NE(error_of("src,dst,sent\n", t).find("p.csv:1: the header has no 'lost' column"), std::string::npos);
  EXPECT_NE(error_of("src,dst,sent,lost,colour\n", t).find("p.csv:1: unknown column 'colour'"), std::string::npos);
  EXPECT_NE(error_of(head + a + "," + b + ",10,11\n", t).find("p.csv:2: column lost: 11 lost of 10 sent"),
            std::string::npos);
  EXPECT_NE(error_of(head + a + "," + b + ",ten,1\n", t).find("p.csv:2: column sent: 'ten'"), std::string::npos);
  EXPECT_NE(error_of(head + "# comment\n" + a + ",nobody,10,1\n", t)
                .find("p.csv:3: column dst: 'nobody' is not a probe endpoint"),
            std::string::npos);
  // Truncated row, under a header that follows a comment line (as podnet writes them): both lines named.
  EXPECT_NE(error_of("# probes\n" + head + a + "," + b + ",10\n", t)
                .find("p.csv:3: row: 3 fields, expected 4 as in the header (line 2)"),
            std::string::npos);
  // A path that does not start where it should, or names no interface.
  const std::string phead = "src,dst,sent,lost,path\n";
  EXPECT_NE(error_of(phead + a + "," + b + ",10,1,nowhere:eth9\n", t)
                .find("p.csv:2: column path: hop 'nowhere:eth9' is not a network interface"),
            std::string::npos);
  const std::string other_hop = t.nodes[t.nics[2]].name + ":" + t.port_name(t.nics[2], 1);
  const std::string err = error_of(phead + a + "," + b + ",10,1," + other_hop + "\n", t);
  EXPECT_TRUE(err.find("p.csv:2: column path: hop") != std::string::npos &&
              err.find("does not leave " + a) != std::string::npos)
      << err;
}

}  // namespace
}  // namespace podnet::diagnose
