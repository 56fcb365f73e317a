// End-to-end tests of `podnet sweep`: the database a real run writes, read
// back; the same table whatever -j; a sweep killed with SIGKILL and started
// again loses and duplicates nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/test_util.hpp"

namespace {

namespace fs = std::filesystem;
using podnet::cli::testing::mpirun;
using podnet::cli::testing::Result;
using podnet::cli::testing::run;
using podnet::cli::testing::run_shell;

fs::path dir() { return podnet::cli::testing::temp_dir("podnet_sweep_test"); }

std::string fresh(const std::string& name) {
  const fs::path p = dir() / name;
  for (const char* s : {"", "-wal", "-shm"}) fs::remove(p.string() + s);
  return p.string();
}

TEST(SweepCli, DesignGridReadBackAsCsv) {
  const std::string db = fresh("design.db");
  const Result r = run("sweep leafspine-8k --study design --vary topology.oversubscription=1,3 --results " + db, true);
  ASSERT_EQ(r.status, 0) << r.out;
  const Result csv = run("sweep --results " + db + " --format csv");
  ASSERT_EQ(csv.status, 0);
  // Header: id, the axis, status, error, then the headline figures in the table's order (switches, transceivers, power,
  // capex, ...), then the other fields.
  EXPECT_EQ(
      csv.out.rfind(
          "id,topology.oversubscription,status,error,bom.switches.total,bom.transceivers,bom.power_kw,cost.capex_usd,",
          0),
      0u)
      << csv.out;
  // leafspine-8k at 1:1: 8,192 GPUs on radix-128 leaves with 64 ports down and 64 up: 8192 / 64 = 128
  // leaves; their 128 x 64 = 8,192 uplinks on radix-128 spines: 64 spines; 192 switches.
  const Result json = run("sweep --results " + db + " --format json");
  EXPECT_NE(json.out.find("\"bom.switches.total\": 192"), std::string::npos) << json.out.substr(0, 2000);
  // Two points, both ok.
  EXPECT_NE(r.out.find("2 points stored, 0 with an error"), std::string::npos) << r.out;
  // --timing adds each point's wall_seconds to the table too (it reached only --format csv and json).
  const Result plain = run("sweep --results " + db), timed = run("sweep --results " + db + " --timing");
  ASSERT_EQ(timed.status, 0) << timed.out;
  EXPECT_EQ(plain.out.find("wall_seconds"), std::string::npos) << plain.out;
  EXPECT_NE(timed.out.find("wall_seconds"), std::string::npos) << timed.out;
}

// aipod-16k at 4,096 GPUs fills 8 of pod 0's 16 groups: its spine layer is built whole, and the sweep says
// which point carries that spare capex (the same $9,420,800 `podnet design` prints under "of which spare").
// Failed points have no results: a --columns naming a result says why they failed, not only which columns
// there are (Llama 3 70B's 80 layers cannot fill aipod-16k's 128 virtual stages).
TEST(SweepCli, AMissingColumnOfFailedPointsSaysWhyTheyFailed) {
  const Result r = run("sweep aipod-16k --set topology.gpus=4096 --set workload.model=llama3-70b --vary "
                       "topology.oversubscription=1:1,3:1 --columns topology.oversubscription,mfu --results " +
                           fresh("failed.db"),
                       true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--columns: no column 'mfu' in these results (2 of 2 points failed, so they have no results; "
                       "the first: aipod-16k.yaml (built-in):52: workload.interleave: pp x interleave = 16 x 8 = 128 "
                       "virtual stages need a layer each, but the model has 80 layers"),
            std::string::npos)
      << r.out;
}

// A sweep whose points failed shows its table, then exits 1 (it exited 0: a script could not tell); reading the
// database back is not a run, and exits 0.
TEST(SweepCli, FailedPointsMakeTheSweepExitOne) {
  const std::string db = fresh("exit.db");
  const Result r = run("sweep aipod-16k --set topology.gpus=4096 --set workload.model=llama3-70b --vary "
                       "topology.oversubscription=1:1,3:1 --results " +
                           db,
                       true);
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("2 points stored, 2 with an error"), std::string::npos) << r.out;
  // The same error at both points is printed once, with both points (it was printed once a point).
  EXPECT_NE(r.out.find("  points 0 and 1: "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("  point 0: "), std::string::npos) << r.out;
  EXPECT_NE(
      r.out.find(
          "podnet: failed: 2 of 2 points with an error; the table's status column and the errors under it say why"),
      std::string::npos)
      << r.out;
  EXPECT_EQ(run("sweep --results " + db).status, 0);
}

// --columns takes a column by the header the table shows as well as by its key: a user copies what they see.
// A name that matches nothing lists the columns that hold it, each key beside its header.
TEST(SweepCli, ColumnsTakeTheHeadersTheTableShows) {
  const std::string db = fresh("headers.db");
  ASSERT_EQ(run("sweep leafspine-8k --study design --vary topology.gpus=1024,2048 --results " + db).status, 0);
  const Result by_key = run("sweep --results " + db + " --columns cost.capex_usd,bom.switches.total");
  const Result by_header = run("sweep --results " + db + " --columns 'network capex (USD),SWITCHES'");
  ASSERT_EQ(by_header.status, 0) << by_header.out;
  EXPECT_EQ(by_header.out, by_key.out);
  // 1,024 GPUs on radix-128 leaves, 64 down and 64 up: 16 leaves, 8 spines.
  EXPECT_NE(by_header.out.find("network capex (USD)  switches"), std::string::npos) << by_header.out;
  EXPECT_NE(by_header.out.find("  24\n"), std::string::npos) << by_header.out;
  // A result the study does not declare reads as diff labels it, not as its key.
  const Result leaf = run("sweep --results " + db + " --columns bom.switches.leaf");
  ASSERT_EQ(leaf.status, 0) << leaf.out;
  EXPECT_NE(leaf.out.find("switches, leaf"), std::string::npos) << leaf.out;
  EXPECT_EQ(leaf.out.find("bom.switches.leaf"), std::string::npos) << leaf.out;
  const Result near = run("sweep --results " + db + " --columns capex_per", true);
  EXPECT_EQ(near.status, 2);
  EXPECT_NE(near.out.find("--columns: no column 'capex_per' in these results; columns that hold the name: "
                          "cost.capex_per_gpu_usd ('network capex per GPU (USD)') (give a key or the header the "
                          "table shows)"),
            std::string::npos)
      << near.out;
}

// A --columns name no result could match is refused before any point runs (a header typed wrong: the design
// study declares "network capex", not "network capital"). A key the study does not declare may still be in its
// documents: it is looked for in the first point's results, and the error at the end says the points are stored.
TEST(SweepCli, ColumnsAreCheckedBeforeTheSweepRuns) {
  const std::string db = fresh("early.db");
  const Result header = run("sweep leafspine-8k --study design --vary topology.gpus=1024,2048 --results " + db +
                                " --columns 'network capital (USD)'",
                            true);
  EXPECT_EQ(header.status, 2) << header.out;
  EXPECT_NE(header.out.find("--columns: no column 'network capital (USD)' in a design sweep"), std::string::npos)
      << header.out;
  EXPECT_NE(header.out.find("checked before any point runs"), std::string::npos) << header.out;
  // No result holds "network capital": those holding its first word are named.
  EXPECT_NE(header.out.find("results that hold the name: "), std::string::npos) << header.out;
  EXPECT_NE(header.out.find("cost.capex_usd ('network capex')"), std::string::npos) << header.out;
  EXPECT_FALSE(fs::exists(db));
  // By label, by header and by key, with the axis: accepted.
  ASSERT_EQ(run("sweep leafspine-8k --study design --vary topology.gpus=1024,2048 --results " + db +
                " --columns 'topology.gpus,network capex (USD),switches,bom.transceivers'")
                .status,
            0);
  const std::string db2 = fresh("late.db");
  const Result late = run("sweep leafspine-8k --study design --vary topology.gpus=1024,2048 --results " + db2 +
                              " --columns topology.gpus,bom.switchez",
                          true);
  EXPECT_EQ(late.status, 2) << late.out;
  EXPECT_NE(late.out.find("podnet sweep: warning: --columns: 'bom.switchez' not in the first point's results; unless "
                          "a later point has it, the table at the end has the default columns, then the error"),
            std::string::npos)
      << late.out;
  // Nothing run is lost from view: the default table, then the error (exit 2).
  EXPECT_NE(late.out.find("podnet sweep: design study, 2 points stored"), std::string::npos) << late.out;
  EXPECT_NE(late.out.find("status  switches  transceivers"), std::string::npos) << late.out;
  EXPECT_NE(late.out.find("; the points are stored in " + db2 + ": `podnet sweep --results " + db2), std::string::npos)
      << late.out;
  // A declared-but-absent header is not warned about early; an undeclared key the documents hold is not either.
  const Result core = run("sweep leafspine-8k --study design --vary topology.gpus=1024,2048 --results " +
                              fresh("core.db") + " --columns topology.gpus,bom.switches.leaf",
                          true);
  EXPECT_EQ(core.status, 0) << core.out;
  EXPECT_EQ(core.out.find("warning: --columns"), std::string::npos) << core.out;
}

// A sweep leaves its database alone in the folder: reading the table back through a read-only connection left
// db-wal and db-shm beside it after every run.
TEST(SweepCli, LeavesNoWriteAheadLogBehind) {
  const std::string db = (dir() / "tidy.db").string();
  fs::remove(db);
  ASSERT_EQ(run("sweep leafspine-8k --study design --vary topology.gpus=1024,2048 --results " + db).status, 0);
  EXPECT_TRUE(fs::exists(db));
  EXPECT_FALSE(fs::exists(db + "-wal"));
  EXPECT_FALSE(fs::exists(db + "-shm"));
  ASSERT_EQ(run("sweep --results " + db).status, 0);  // reading it back too
  EXPECT_FALSE(fs::exists(db + "-wal"));
}

// A serving point that outruns its replicas is stored as run (status ok), but the table says its latencies grow with
// the run: podnet inference prints OVERLOADED there. Llama 3 70B on one TP8 server serves about 1 request a second
// (the inference docs' example), so 16 a second is overloaded and 1 is not.
TEST(SweepCli, OverloadedServingPointsAreSaid) {
  const std::string db = (dir() / "overloaded.db").string();
  fs::remove(db);
  const Result r =
      run("sweep leafspine-8k --study inference --set workload.model=llama3-70b --set inference.requests=200 "
          "--vary inference.rate=1,16 --results " +
          db);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(podnet::cli::testing::flat(r.out).find(
                "note: overloaded (point 1): requests arrive faster than the replicas serve them"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("point 0"), std::string::npos) << r.out;
  // Read back, the yes/no results are booleans, as the study's schema says (the store keeps 1 and 0): point 0 is
  // not overloaded, point 1 is.
  const Result csv = run("sweep --results " + db + " --format csv");
  ASSERT_EQ(csv.status, 0) << csv.out;
  const auto column = [&](const std::string& name) {  // the column's index in the header
    const std::string head = "," + csv.out.substr(0, csv.out.find('\n')) + ",";
    const size_t at = head.find("," + name + ",");
    return at == std::string::npos
               ? -1L
               : static_cast<long>(std::count(head.begin(), head.begin() + static_cast<long>(at), ','));
  };
  const auto cell = [&](int row, long col) {
    size_t at = 0;
    for (int i = 0; i <= row; ++i) at = csv.out.find('\n', at) + 1;
    for (long c = 0; c < col; ++c) at = csv.out.find(',', at) + 1;
    return csv.out.substr(at, csv.out.find_first_of(",\n", at) - at);
  };
  const long overloaded = column("stream.overloaded");
  ASSERT_GE(overloaded, 0) << csv.out;
  EXPECT_EQ(cell(0, overloaded), "false") << csv.out;
  EXPECT_EQ(cell(1, overloaded), "true") << csv.out;
  const Result json = run("sweep --results " + db + " --format json");
  EXPECT_NE(json.out.find("\"stream.overloaded\": true"), std::string::npos) << json.out;
  EXPECT_NE(json.out.find("\"stream.overloaded\": false"), std::string::npos) << json.out;
}

// A bench point on the flow engine stores the flows' completion times as bench prints them: min, p50, p99, max and
// mean per size (min and mean were left out), each between min and max.
TEST(SweepCli, BenchPointsKeepEveryFctFigure) {
  const std::string db = fresh("fct.db");
  const Result r = run("sweep leafspine-8k --study bench --set network.engine=flow --op alltoall -g 0-63:8 -b 1MiB -e "
                       "1MiB --vary topology.oversubscription=1,2 --results " +
                       db);
  ASSERT_EQ(r.status, 0) << r.out;
  const Result json = run("sweep --results " + db + " --format json");
  ASSERT_EQ(json.status, 0) << json.out;
  const nlohmann::json d = nlohmann::json::parse(json.out);
  ASSERT_EQ(d["points"].size(), 2u);
  for (const auto& p : d["points"]) {
    const std::string at = "_us@0000000001048576";
    for (const char* k : {"min", "p50", "p99", "max", "mean"})
      ASSERT_TRUE(p.contains(std::string("fct.") + k + at)) << k << ": " << p.dump();
    const double lo = p["fct.min" + at].get<double>(), hi = p["fct.max" + at].get<double>();
    EXPECT_GT(lo, 0);
    for (const char* k : {"p50", "p99", "mean"}) {
      EXPECT_GE(p[std::string("fct.") + k + at].get<double>(), lo) << k;
      EXPECT_LE(p[std::string("fct.") + k + at].get<double>(), hi) << k;
    }
  }
}

TEST(SweepCli, SpareCapexOfPartFilledPodsIsSaid) {
  const std::string db = (dir() / "spare.db").string();
  const Result r = run("sweep aipod-16k --study design --vary topology.gpus=4096,16384 --results " + db);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("note: point 0 ($9,420,800) carries capex for part-filled pods"), std::string::npos) << r.out;
  // 2:1 on radix-128 leaves: 85 down / 43 up ports, 40 of them cabled, 85 / 40 = 2.125:1.
  const std::string db2 = (dir() / "ratio.db").string();
  const Result o = run("sweep aipod-16k --study design --vary topology.oversubscription=1:1,2:1 --results " + db2);
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_NE(o.out.find("note: whole ports round the oversubscription at the leaf: point 1 built 2.125:1 (asked 2:1)"),
            std::string::npos)
      << o.out;
  const Result d = run("design aipod-16k --set topology.gpus=4096");
  EXPECT_NE(d.out.find("of which spare in pod 0's spine layer (8 of 16 groups)"), std::string::npos) << d.out;
  EXPECT_NE(d.out.find("$9,420,800"), std::string::npos) << d.out;
}

TEST(SweepCli, ABadKeyFailsBeforeAnyPointRuns) {
  const std::string db = fresh("bad.db");
  const Result r = run("sweep leafspine-8k --study design --vary topology.oversubscripton=1,3 --results " + db, true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("oversubscription"), std::string::npos) << r.out;  // did you mean
  EXPECT_FALSE(fs::exists(db));
}

TEST(SweepCli, ABadValueAnywhereFailsBeforeAnyPointRunsNamingWhereItWasGiven) {
  // The second value of the axis is a typo (GBps): refused before anything runs and blamed on --vary, not
  // --set (it became a stored error row, and the stored definition then kept the typo).
  const std::string db = fresh("badvalue.db");
  Result r = run("sweep leafspine-8k --study design --vary server.nic_speed=400Gbps,400GBps --results " + db, true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--vary server.nic_speed: '400GBps' is not valid"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(db));
  // From a sweep file: its file and line; zipped axes of unequal lengths too.
  const std::string file =
      podnet::cli::testing::write_file(dir(), "bad-sweep.yaml",
                                       "study: design\nvary:\n  server.nic_speed: [400Gbps, 400GBps]\n");
  r = run("sweep leafspine-8k --sweep-file " + file + " --results " + db, true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("bad-sweep.yaml:3: server.nic_speed: '400GBps' is not valid"), std::string::npos) << r.out;
  const std::string zip = podnet::cli::testing::write_file(
      dir(), "bad-zip.yaml",
      "study: design\nzip:\n  - {server.nic_speed: [200Gbps, 400Gbps], switch.port_speed: [200Gbps, 400Gbps, "
      "800Gbps]}\n");
  r = run("sweep leafspine-8k --sweep-file " + zip + " --results " + db, true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("bad-zip.yaml:3: zipped axes"), std::string::npos) << r.out;
  // A sweep file's study: and a --study that disagrees (the file's silently won).
  r = run("sweep leafspine-8k --study train --sweep-file " + file + " --results " + db, true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--study train and"), std::string::npos) << r.out;
}

const char* kTrain =
    "sweep leafspine-8k --study train --set workload.model=llama3-8b --set workload.pp=1 --set workload.dp=16 "
    "--set workload.global_batch=64 --vary workload.tp=2,4,8 --vary network.engine=analytical,flow";

// A TP axis over llama3-8b's recipe: giving workload.tp drops the recipe's layout (PP 1, CP 2), and podnet's
// defaults change PP and CP too. The table shows the layout columns that change, so the slowdown is not put down
// to TP alone (only the TP axis was shown).
TEST(SweepCli, TheJobsLayoutIsShownWhereItChangesBeyondTheAxes) {
  const std::string db = fresh("layout.db");
  const Result r = run("sweep leafspine-8k --study train --set workload.model=llama3-8b --set topology.gpus=64 "
                       "--vary workload.tp=1,2 --results " +
                       db);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("PP (stages)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("DP (replicas)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("parallelism."), std::string::npos) << r.out;
  // A DP axis is its own column: the resolved DP is not shown again.
  const Result dp = run("sweep leafspine-8k --study train --set workload.model=llama3-8b --set topology.gpus=64 "
                        "--vary workload.dp=8,16 --results " +
                        fresh("layout-dp.db"));
  ASSERT_EQ(dp.status, 0) << dp.out;
  EXPECT_EQ(dp.out.find("DP (replicas)"), std::string::npos) << dp.out;
}

TEST(SweepCli, SameResultsWhateverTheThreadCount) {
  const std::string a = fresh("j1.db"), b = fresh("j2.db");
  ASSERT_EQ(run(std::string(kTrain) + " -j 1 --results " + a).status, 0);
  ASSERT_EQ(run(std::string(kTrain) + " -j 2 --results " + b).status, 0);
  const Result ca = run("sweep --results " + a + " --format csv"), cb = run("sweep --results " + b + " --format csv");
  EXPECT_EQ(ca.out, cb.out);
  // 3 x 2 points, one line each after the header.
  EXPECT_EQ(std::count(ca.out.begin(), ca.out.end(), '\n'), 7);
}

TEST(SweepCli, KilledAndRestartedLosesAndDuplicatesNothing) {
  const std::string whole = fresh("whole.db"), killed = fresh("killed.db");
  const std::string args =
      " leafspine-8k --study bench --set network.engine=flow --gpus 0-511:8 --min 1MiB --max 64MiB --factor 8 "
      "--vary server.nic_speed=100Gbps,200Gbps,400Gbps --vary collective.channels=1,2,3 ";
  ASSERT_EQ(run("sweep" + args + "--results " + whole).status, 0);
  // Start it, SIGKILL it once at least one point is stored (or when it ends on its own), start it again.
  const std::string bin = PODNET_BINARY;
  const Result k = run_shell("(" + bin + " sweep" + args + "--results " + killed + " >/dev/null 2>&1 & pid=$!; " +
                             "for i in $(seq 1 200); do " + bin + " sweep --results " + killed +
                             " --format csv 2>/dev/null | grep -q '^0,' && break; sleep 0.05; done; " +
                             "kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null; echo killed)");
  EXPECT_NE(k.out.find("killed"), std::string::npos);
  const Result again = run("sweep" + args + "--results " + killed, true);
  ASSERT_EQ(again.status, 0) << again.out;
  EXPECT_NE(again.out.find("9 points: "), std::string::npos) << again.out;
  EXPECT_EQ(run("sweep --results " + killed + " --format csv").out,
            run("sweep --results " + whole + " --format csv").out);
}

}  // namespace

namespace {

TEST(SweepCli, MpiRanksGiveTheSameTableAsOneProcess) {
  // Open MPI from scripts/setup.sh (openmpi-bin); root and more ranks than cores are allowed for the test.
  const std::string one = fresh("mpi1.db"), three = fresh("mpi3.db");
  ASSERT_EQ(run(std::string(kTrain) + " --results " + one).status, 0);
  const Result m = run_shell(mpirun(3) + std::string(kTrain) + " --results " + three, true);
  ASSERT_EQ(m.status, 0) << m.out;
  EXPECT_NE(m.out.find("3 MPI ranks: 1 coordinator, 2 workers"), std::string::npos) << m.out;
  // Only rank 0 prints the table.
  EXPECT_EQ(m.out.find("podnet sweep: train study"), m.out.rfind("podnet sweep: train study")) << m.out;
  EXPECT_EQ(run("sweep --results " + one + " --format csv").out, run("sweep --results " + three + " --format csv").out);
}

}  // namespace

namespace {

TEST(DiffCli, WhatIfOnOneKey) {
  const Result r = run("diff leafspine-8k leafspine-8k --study design --set-b topology.oversubscription=3:1", true);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("inputs that differ (1)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("topology.oversubscription"), std::string::npos);
  // 3:1 leaves keep fewer uplinks: fewer leaf-spine links.
  const Result j =
      run("diff leafspine-8k leafspine-8k --study design --set-b topology.oversubscription=3:1 --format json");
  ASSERT_EQ(j.status, 0);
  EXPECT_NE(j.out.find("\"field\": \"bom.links.leaf-spine\""), std::string::npos) << j.out.substr(0, 3000);
}

// Two saved training results whose only input change is tp: the recipe moved cp, pp and dp too, which the run
// blocks do not record. The note names the layout as each side resolved it, and the engine line says which
// engine timed both. A: llama3-8b's recipe, TP1 x CP2 x PP1, so DP 64 / 2 = 32. B: --set tp keeps the recipe's
// layout group away, so cp and pp are podnet's defaults (1 and 8): DP 64 / (2 x 8) = 4.
TEST(DiffCli, TwoSavedTrainingResultsNameTheLayoutTheyResolved) {
  const std::string job = " train leafspine-8k --set workload.model=llama3-8b --set topology.gpus=64 --engine "
                          "analytical --format json";
  const std::string a = (dir() / "ta.json").string(), b = (dir() / "tb.json").string();
  ASSERT_EQ(run_shell(std::string(PODNET_BINARY) + job + " > " + a).status, 0);
  ASSERT_EQ(run_shell(std::string(PODNET_BINARY) + job + " --set workload.tp=2 > " + b).status, 0);
  const Result r = run("diff " + a + " " + b, true);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("inputs that differ (1)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("    on 64 GPUs, analytical engine\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("note: the two jobs differ (TP 1 -> 2, CP 2 -> 1, PP 1 -> 8, DP 32 -> 4)"), std::string::npos)
      << r.out;
}

TEST(DiffCli, TwoSavedResults) {
  const std::string a = (dir() / "a.json").string(), b = (dir() / "b.json").string();
  ASSERT_EQ(run_shell(std::string(PODNET_BINARY) + " design leafspine-8k --format json > " + a).status, 0);
  ASSERT_EQ(run_shell(std::string(PODNET_BINARY) +
                      " design leafspine-8k --set switch.radix=64 --set topology.tiers=3 "
                      "--format json > " +
                      b)
                .status,
            0);
  const Result r = run("diff " + a + " " + b, true);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("design:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("    switches  "), std::string::npos) << r.out;  // bom.switches.total, by its label
  // A field no label declares, labelled from its key (bom.switches.spine), and its unit from the key's suffix.
  EXPECT_NE(r.out.find("    switches, spine  "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("    capex, fibre  "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" $"), std::string::npos) << r.out;  // money as design prints it
  EXPECT_EQ(r.out.find("bom."), std::string::npos) << r.out;
  // Identical documents: nothing changed.
  const Result same = run("diff " + a + " " + a, true);
  EXPECT_NE(same.out.find("0 figures changed"), std::string::npos) << same.out;
  // Results of two studies: refused (it printed a header and nothing, which read as "no difference"); and what
  // runs studies does not apply to two results (it was silently ignored).
  const std::string t = (dir() / "t.json").string();
  ASSERT_EQ(run_shell(std::string(PODNET_BINARY) + " reliability leafspine-8k --format json > " + t).status, 0);
  const Result mixed = run("diff " + a + " " + t, true);
  EXPECT_EQ(mixed.status, 2) << mixed.out;
  EXPECT_NE(mixed.out.find("cannot compare the design result"), std::string::npos) << mixed.out;
  const Result set_b = run("diff " + a + " " + b + " --set-b server.nic_speed=100Gbps", true);
  EXPECT_EQ(set_b.status, 2) << set_b.out;
  EXPECT_NE(set_b.out.find("--set-b applies to scenarios only"), std::string::npos) << set_b.out;
}

}  // namespace

namespace {

TEST(SweepCli, DiagnoseEvaluationPerPoint) {
  // Two routings of the golden leaf-spine, 3 trials each of one hidden link at 0.1 % loss for 60 s: every
  // point stores the evaluation's precision and recall.
  const std::string db = fresh("diagnose.db");
  const std::string scenario = (fs::path(PODNET_SOURCE_DIR) / "tests/golden/diagnose-faults/scenario.yaml").string();
  const Result r = run("sweep " + scenario +
                           " --study diagnose --evaluate 3 --duration 60s --vary "
                           "network.routing=ecmp,adaptive --results " +
                           db,
                       true);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("2 points stored, 0 with an error"), std::string::npos) << r.out;
  const Result json = run("sweep --results " + db + " --format json");
  EXPECT_NE(json.out.find("\"evaluation.precision\""), std::string::npos) << json.out.substr(0, 2000);
  EXPECT_NE(json.out.find("\"evaluation.trials\": 3"), std::string::npos) << json.out.substr(0, 2000);
}

}  // namespace
