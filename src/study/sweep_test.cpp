// The sweep runner with a stand-in study: axes, the grid, the database,
// resuming, and results independent of the thread count.
#include "study/sweep.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sqlite3.h>
#include <string>

#include "core/error.hpp"

namespace podnet::study {
namespace {

std::string temp_db(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("podnet-sweep-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto p = dir / name;
  std::filesystem::remove(p);
  std::filesystem::remove(p.string() + "-wal");
  std::filesystem::remove(p.string() + "-shm");
  return p.string();
}

TEST(Sweep, AxesListsAndRanges) {
  EXPECT_EQ(parse_axis("network.routing=ecmp,adaptive").values, (std::vector<std::string>{"ecmp", "adaptive"}));
  EXPECT_EQ(parse_axis("workload.tp=1..4").values, (std::vector<std::string>{"1", "2", "3", "4"}));
  EXPECT_EQ(parse_axis("workload.dp=8..40+16").values, (std::vector<std::string>{"8", "24", "40"}));
  EXPECT_EQ(parse_axis("workload.dp=1..64*4").values, (std::vector<std::string>{"1", "4", "16", "64"}));
  // A value with a colon is a value, not a range (oversubscription 3:1).
  EXPECT_EQ(parse_axis("topology.oversubscription=3:1").values, (std::vector<std::string>{"3:1"}));
  EXPECT_THROW(parse_axis("workload.tp"), InputError);
  EXPECT_THROW(parse_axis("workload.tp=1,,2"), InputError);
  EXPECT_THROW(parse_axis("workload.tp=4..1"), InputError);
  EXPECT_THROW(parse_axis("workload.tp=1..8*1"), InputError);
  EXPECT_THROW(parse_axis("workload.tp=2,2"), InputError);
  try {
    parse_axis("network.routing=ecmp,adaptive,ecmp");
    ADD_FAILURE() << "a listed value given twice was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'ecmp' is given twice"), std::string::npos) << e.what();
  }
  // 1..1000000 is kMaxPoints = 10^6 distinct values; one more is refused.
  const Axis full = parse_axis("seed=1..1000000");
  ASSERT_EQ(full.values.size(), 1000000u);
  EXPECT_EQ(full.values.back(), "1000000");
  EXPECT_THROW(parse_axis("seed=1..1000001"), InputError);
  // Counted before any value is written: the whole int64 range (its width overflows int64) and 10^18.
  EXPECT_THROW(parse_axis("seed=-9223372036854775807..9223372036854775807"), InputError);
  EXPECT_THROW(parse_axis("seed=1..1000000000000000000"), InputError);
  EXPECT_EQ(parse_axis("seed=1..9223372036854775807*2").values.size(), 63u);  // 2^0 .. 2^62
  // 1..2^62*2 is 63 values 1, 2, 4, ..., 2^62: the last below INT64_MAX, no overflow.
  const Axis geo = parse_axis("seed=1..4611686018427387904*2");
  ASSERT_EQ(geo.values.size(), 63u);
  EXPECT_EQ(geo.values.back(), "4611686018427387904");
}

TEST(Sweep, GridIsRowMajorLastAxisFastest) {
  const auto pts = cartesian({{"a", {"1", "2"}}, {"b", {"x", "y", "z"}}});
  ASSERT_EQ(pts.size(), 6u);  // 2 x 3
  EXPECT_EQ(pts[0].values, (std::vector<std::string>{"1", "x"}));
  EXPECT_EQ(pts[1].values, (std::vector<std::string>{"1", "y"}));
  EXPECT_EQ(pts[3].values, (std::vector<std::string>{"2", "x"}));
  EXPECT_EQ(pts[5].id, 5);
  SweepSpec s;
  s.sets = {"seed=2"};
  s.axes = {{"a", {"1", "2"}}, {"b", {"x", "y", "z"}}};
  EXPECT_EQ(s.overrides(pts[4]), (std::vector<std::string>{"seed=2", "a=2", "b=y"}));
  // 1000^3 = 1e9 points: refused before anything is allocated.
  Axis big{"k", {}};
  for (int i = 0; i < 1000; ++i) big.values.push_back(std::to_string(i));
  EXPECT_THROW(cartesian({big, big, big}), InputError);
}

SweepSpec spec() {
  SweepSpec s;
  s.study = "test";
  s.scenario = "none";
  s.axes = {{"x", {"1", "2", "3", "4", "5"}}, {"mode", {"fast", "slow"}}};
  return s;
}

// A stand-in study: y = x^2, text, and an error at x = 3, slow.
Outcome square(const SweepPoint& p) {
  const int64_t x = std::stoll(p.values[0]);
  if (x == 3 && p.values[1] == "slow") return {false, "x = 3 is refused", {}};
  Outcome o;
  o.fields = {{"y", x * x}, {"half", static_cast<double>(x) / 2}, {"mode_seen", p.values[1]}, {"nothing", {}}};
  if (p.values[1] == "slow") o.fields.push_back({"only_slow", int64_t{1}});  // a column not every point has
  return o;
}

TEST(Sweep, StoresEveryPointAndReadsThemBackInOrder) {
  const std::string db = temp_db("a.db");
  const SweepStats st = run_sweep(spec(), db, square, 1);
  EXPECT_EQ(st.points, 10);  // 5 x 2
  EXPECT_EQ(st.ran, 10);
  EXPECT_EQ(st.failed, 1);
  const ResultTable t = read_results(db);
  EXPECT_EQ(t.study, "test");
  ASSERT_EQ(t.rows.size(), 10u);
  // id, the axes, status, error, then the fields sorted by name.
  EXPECT_EQ(t.columns, (std::vector<std::string>{"id", "x", "mode", "status", "error", "half", "mode_seen", "nothing",
                                                 "only_slow", "y"}));
  // Point 9 is x = 5, slow: y = 25, half = 2.5.
  EXPECT_EQ(std::get<int64_t>(t.rows[9][0]), 9);
  EXPECT_EQ(std::get<int64_t>(t.rows[9][1]), 5);
  EXPECT_EQ(std::get<int64_t>(t.rows[9][9]), 25);
  EXPECT_DOUBLE_EQ(std::get<double>(t.rows[9][5]), 2.5);
  // Point 5 is x = 3, slow: the error, no fields.
  EXPECT_EQ(std::get<std::string>(t.rows[5][3]), "error");
  EXPECT_EQ(std::get<std::string>(t.rows[5][4]), "x = 3 is refused");
  EXPECT_TRUE(std::holds_alternative<std::monostate>(t.rows[5][9]));
}

TEST(Sweep, SameTableWhateverTheThreadCount) {
  const std::string a = temp_db("j1.db"), b = temp_db("j4.db");
  run_sweep(spec(), a, square, 1);
  run_sweep(spec(), b, square, 4);
  const ResultTable ta = read_results(a), tb = read_results(b);
  EXPECT_EQ(ta.columns, tb.columns);
  EXPECT_EQ(ta.rows, tb.rows);
}

TEST(Sweep, ResumesOnlyTheMissingPoints) {
  const std::string db = temp_db("r.db");
  run_sweep(spec(), db, square, 2);
  // Two points lost (as if the sweep had been killed before committing them).
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(h, "DELETE FROM points WHERE id IN (2, 7)", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(h);
  std::atomic<int> calls{0};
  const SweepStats st = run_sweep(
      spec(), db,
      [&](const SweepPoint& p) {
        ++calls;
        return square(p);
      },
      2);
  EXPECT_EQ(calls.load(), 2);
  EXPECT_EQ(st.already, 8);
  const ResultTable t = read_results(db);
  ASSERT_EQ(t.rows.size(), 10u);
  for (size_t i = 0; i < t.rows.size(); ++i) EXPECT_EQ(std::get<int64_t>(t.rows[i][0]), static_cast<int64_t>(i));
  // Run again: nothing left to do.
  calls = 0;
  run_sweep(
      spec(), db,
      [&](const SweepPoint& p) {
        ++calls;
        return square(p);
      },
      1);
  EXPECT_EQ(calls.load(), 0);
}

TEST(Sweep, ADifferentSweepOnTheSameDatabaseIsRefused) {
  const std::string db = temp_db("d.db");
  run_sweep(spec(), db, square, 1);
  SweepSpec other = spec();
  other.axes[0].values.push_back("6");
  try {
    run_sweep(other, db, square, 1);
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("holds another sweep"), std::string::npos);
  }
}

TEST(Sweep, AFileNamedByAKeyIsPartOfTheDefinition) {
  // inference.lengths_file given with --set or as an axis: its contents are recorded like a scenario file's.
  const std::string csv = temp_db("lengths.csv");
  std::ofstream(csv) << "prompt,output\n100,10\n";
  SweepSpec s = spec();
  s.sets = {"inference.lengths_file=" + csv};
  const std::string before = s.definition();
  EXPECT_NE(before.find("lengths.csv (21 bytes, fnv1a64"), std::string::npos) << before;
  std::ofstream(csv) << "prompt,output\n200,10\n";
  EXPECT_NE(s.definition(), before);
  s.sets.clear();
  s.axes[0].key = "inference.lengths_file";
  s.axes[0].values = {csv};
  EXPECT_NE(s.definition().find("lengths.csv (21 bytes, fnv1a64"), std::string::npos) << s.definition();
}

TEST(Sweep, AScenarioFileEditedBetweenRunsMakesAnotherSweep) {
  // The same command line on a scenario file (and a --config-add fragment) whose contents changed: the stored
  // definition records each file's size and hash, so resuming is refused rather than mixing results of both.
  const std::string db = temp_db("e.db");
  const std::string file = temp_db("scenario.yaml"), frag = temp_db("frag.yaml");
  auto write = [](const std::string& path, const char* text) { std::ofstream(path) << text; };
  write(file, "server:\n  nic_speed: 400Gbps\n");
  write(frag, "links:\n  ethernet_efficiency: 0.8\n");
  SweepSpec s = spec();
  s.scenario = file;
  s.fragments = {frag};
  run_sweep(s, db, square, 1);
  EXPECT_NE(s.definition().find("bytes, fnv1a64"), std::string::npos);
  run_sweep(s, db, square, 1);  // unchanged: resumes (nothing left)
  for (const std::string* edited : {&file, &frag}) {
    const std::string before = s.definition();
    write(*edited, edited == &file ? "server:\n  nic_speed: 100Gbps\n" : "links:\n  ethernet_efficiency: 0.3\n");
    EXPECT_NE(s.definition(), before);
    try {
      run_sweep(s, db, square, 1);
      FAIL() << "accepted after " << *edited << " changed";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("holds another sweep"), std::string::npos);
    }
    write(*edited, edited == &file ? "server:\n  nic_speed: 400Gbps\n" : "links:\n  ethernet_efficiency: 0.8\n");
    EXPECT_EQ(s.definition(), before);  // the same contents again: the same sweep
  }
}

TEST(Sweep, AnEvaluatorThatThrowsRecordsTheError) {
  const std::string db = temp_db("e.db");
  SweepSpec s = spec();
  s.axes = {{"x", {"1", "2"}}};
  const SweepStats st = run_sweep(
      s, db,
      [](const SweepPoint& p) -> Outcome {
        if (p.values[0] == "2") throw InputError("bad point");
        return {true, {}, {{"y", int64_t{1}}}};
      },
      1);
  EXPECT_EQ(st.failed, 1);
  EXPECT_EQ(std::get<std::string>(read_results(db).rows[1][3]), "bad point");
}

TEST(Sweep, ReadingSomethingElseIsAnInputError) { EXPECT_THROW(read_results(temp_db("missing.db")), InputError); }

}  // namespace
}  // namespace podnet::study

namespace podnet::study {
namespace {

TEST(Sweep, ZippedAxesAdvanceTogether) {
  // One free axis (2 values) and a zip group of two keys (3 values each): 2 x 3 = 6 points.
  std::vector<Axis> axes = {{"a", {"1", "2"}, ""},
                            {"nic", {"100G", "200G", "400G"}, "z"},
                            {"port", {"100G", "200G", "400G"}, "z"}};
  const auto pts = cartesian(axes);
  ASSERT_EQ(pts.size(), 6u);
  for (const auto& p : pts) EXPECT_EQ(p.values[1], p.values[2]);              // paired, never crossed
  EXPECT_EQ(pts[4].values, (std::vector<std::string>{"2", "200G", "200G"}));  // id 4 = (1, 1)
  axes[2].values.pop_back();
  EXPECT_THROW(cartesian(axes), InputError);  // 3 and 2 values cannot be paired
}

TEST(Sweep, SweepFileWithVaryZipAndErrorsAtTheirLine) {
  const auto dir = std::filesystem::temp_directory_path() / ("podnet-sweep-file-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string good = (dir / "good.yaml").string(), bad = (dir / "bad.yaml").string();
  std::ofstream(good) << "study: design\nvary:\n  topology.oversubscription: [1, 2]\n  workload.dp: \"1..4*2\"\n"
                         "zip:\n  - {server.nic_speed: [200Gbps, 400Gbps], switch.port_speed: [200Gbps, 400Gbps]}\n";
  const SweepFile f = load_sweep_file(good);
  EXPECT_EQ(f.study, "design");
  ASSERT_EQ(f.axes.size(), 4u);
  EXPECT_EQ(f.axes[1].values, (std::vector<std::string>{"1", "2", "4"}));
  EXPECT_EQ(f.axes[2].zip, f.axes[3].zip);
  EXPECT_FALSE(f.axes[2].zip.empty());
  EXPECT_EQ(cartesian(f.axes).size(), 2u * 3u * 2u);
  std::ofstream(bad) << "vary:\n  workload.tp: [1, 2]\nvaryy:\n  x: [1]\n";
  try {
    load_sweep_file(bad);
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.yaml:3: varyy: unknown key"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace podnet::study
