// Regression tests for the third bad-input campaign: each case crashed,
// hung, printed a wrong figure with exit 0, or blamed the wrong place before
// its fix. Every one must now exit 2 with a message that names the file (and
// line) or option and what was expected, and leave nothing behind.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "cli/test_util.hpp"

namespace {

using podnet::cli::testing::Result;
using podnet::cli::testing::run;
using podnet::cli::testing::run_shell;
using podnet::cli::testing::temp_dir;
using podnet::cli::testing::write_file;

bool has(const Result& r, const std::string& text) { return r.out.find(text) != std::string::npos; }

TEST(HostileInput, AYamlAnchorHoldingItsOwnAliasIsRefusedEverywhere) {
  // A 68-byte file crashed resolve, design and --config-add (SIGSEGV, exit 139).
  const auto dir = temp_dir("podnet_hostile");
  const std::string self = write_file(dir, "self.yaml", "x: &a [*a]\n");
  const std::string topo =
      write_file(dir, "topo.yaml", "schema_version: 1\ntopology: &a {family: fat_tree, gpus: 64, x: *a}\n");
  for (const std::string& cmd : {"resolve " + self, "design " + self, "design aipod-16k --config-add " + self,
                                 "resolve " + topo, "train " + topo}) {
    const Result r = run(cmd, true);
    EXPECT_EQ(r.status, 2) << cmd << "\n" << r.out;
    EXPECT_TRUE(has(r, "is inside its own anchor &a")) << cmd << "\n" << r.out;
  }
  EXPECT_TRUE(has(run("resolve " + self, true), "self.yaml:1:8: alias *a is inside its own anchor &a"));
}

TEST(HostileInput, YamlBombsAndSecondDocumentsAreRefused) {
  const auto dir = temp_dir("podnet_hostile");
  std::string bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 10; ++i) {
    bomb += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) bomb += (k ? ", *a" : "*a") + std::to_string(i - 1);
    bomb += "]\n";
  }
  Result r = run("resolve " + write_file(dir, "laughs.yaml", bomb), true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r, "laughs.yaml:6:10: the document expands to over 200,000 values")) << r.out;
  r = run("resolve " +
              write_file(dir, "two.yaml", "schema_version: 1\ntopology: {family: fat_tree, gpus: 64}\n---\nseed: 2\n"),
          true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r, "two.yaml:3:1: a second YAML document (after '---'); expected one document per file")) << r.out;
  // A sweep file goes through the same intake.
  r = run("sweep aipod-16k --study design --sweep-file " + write_file(dir, "sweep.yaml", "x: &a [*a]\n") +
              " --results " + (dir / "s.sqlite").string(),
          true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r, "sweep.yaml:1:8: alias *a is inside its own anchor")) << r.out;
}

TEST(HostileInput, ADirectoryIsNotAFile) {
  const auto dir = temp_dir("podnet_hostile");
  Result r = run("design aipod-16k --config-add " + dir.string(), true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r, "--config-add " + dir.string() + ": is a directory; expected a YAML file")) << r.out;
}

TEST(HostileInput, DiffRefusesDeepAndDuplicateJson) {
  const auto dir = temp_dir("podnet_hostile");
  // 200,000 levels crashed `podnet diff` (a recursive walk).
  const std::string deep = write_file(dir, "deep.json", std::string(200000, '[') + std::string(200000, ']'));
  Result r = run("diff " + deep + " " + deep, true);
  EXPECT_EQ(r.status, 2) << r.out.substr(0, 400);
  EXPECT_TRUE(has(r, "deep.json: $[0][0]")) << r.out.substr(0, 400);
  EXPECT_TRUE(has(r, "nested over 64 levels deep; expected at most 64")) << r.out.substr(0, 400);
  const std::string dup =
      write_file(dir, "dup.json", R"({"schema_version": 1, "run": {"command": "bench"}, "run": {"command": "x"}})");
  r = run("diff " + dup + " " + dup, true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r, "dup.json: $: the key 'run' is given twice")) << r.out;
}

TEST(HostileInput, MaxMemoryMustBeAPositiveSize) {
  // 0, 0B and "" read as "no limit" and were accepted without a word.
  for (const char* v : {"0", "0B", "''", "' '"}) {
    const Result r = run(std::string("design aipod-16k --max-memory ") + v, true);
    EXPECT_EQ(r.status, 2) << v << "\n" << r.out;
    EXPECT_TRUE(has(r, "--max-memory")) << v << "\n" << r.out;
    EXPECT_TRUE(has(r, "expected a")) << v << "\n" << r.out;
  }
  EXPECT_EQ(run("design aipod-16k --max-memory 8GB").status, 0);
}

TEST(HostileInput, ControlCharactersAreEscapedNotEchoed) {
  const auto dir = temp_dir("podnet_hostile");
  // ESC in a key: the message shows \x1b, the terminal never sees the byte.
  Result r = run("design aipod-16k --set \"topology.gp$(printf '\\033')[31mus=5\"", true);  // sh: no $'...'
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r, "topology.gp\\x1b[31mus: unknown key")) << r.out;
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << r.out;
  // ESC in a value of a file: refused at its line.
  r = run("resolve " + write_file(dir, "esc.yaml", "name: \"a\\e[2Jb\"\ntopology: {family: fat_tree, gpus: 64}\n"),
          true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r, "esc.yaml:1:7: a control character (byte 0x1b)")) << r.out;
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << r.out;
  // A NUL byte in a file: named, and the message is not cut at it.
  static constexpr char kNul[] = "name: a\0b\ntopology: {family: fat_tree}\n";
  r = run("resolve " + write_file(dir, "nul.yaml", std::string(kNul, sizeof kNul - 1)), true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r, "nul.yaml")) << r.out;
  EXPECT_EQ(r.out.find('\0'), std::string::npos) << r.out;
}

TEST(HostileInput, AnMtbfPastTenToTheTwelveHoursIsRefused) {
  // 1e308h printed "MTBF (h) -0" with exit 0.
  const Result r = run("reliability aipod-16k --set reliability.gpu_mtbf=1e308h", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r, "reliability.gpu_mtbf")) << r.out;
  EXPECT_TRUE(has(r, "at least one per 10^12 h")) << r.out;
}

TEST(HostileInput, ASweepDatabaseIsPodnetsAndOneSweepWritesIt) {
  const auto dir = temp_dir("podnet_hostile");
  // Another program's SQLite file: podnet added its tables to it.
  const std::string other = (dir / "other.sqlite").string();
  ASSERT_EQ(run_shell("python3 -c \"import sqlite3; c = sqlite3.connect('" + other +
                      "'); c.execute('CREATE TABLE users(name TEXT)'); c.commit()\"")
                .status,
            0);
  Result r = run("sweep aipod-16k --study design --vary topology.gpus=1024,2048 --results " + other, true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r, "an SQLite database of something else (tables: users)")) << r.out;
  EXPECT_EQ(run_shell("python3 -c \"import sqlite3; print(sorted(r[0] for r in sqlite3.connect('" + other +
                      "').execute('SELECT name FROM sqlite_master WHERE type=\\\"table\\\"')))\"")
                .out,
            "['users']\n");
  // A text file.
  r = run("sweep aipod-16k --study design --vary topology.gpus=1024,2048 --results " +
              write_file(dir, "notes.txt", "hello\n"),
          true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r, "notes.txt: not an SQLite database")) << r.out;
  // A second sweep while one writes: the first holds the file's lock (as a sweep does while it runs).
  const std::string db = (dir / "busy.sqlite").string();
  const int fd = ::open(db.c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  r = run("sweep aipod-16k --study design --vary topology.gpus=1024,2048 --results " + db, true);
  ::close(fd);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r, "another sweep is writing this database now")) << r.out;
  // Released: the same sweep runs.
  r = run("sweep aipod-16k --study design --vary topology.gpus=1024,2048 --results " + db, true);
  EXPECT_EQ(r.status, 0) << r.out;
}

TEST(HostileInput, ASweepDatabaseIsReadBackWherePodnetMayNotWrite) {
  // A results file in a folder the reader may not write (a shared result, copied without its -shm file) gave
  // "attempt to write a readonly database". Root writes anywhere: it reads as nobody (runuser) instead.
  const auto dir = temp_dir("podnet_hostile") / "ro";
  std::filesystem::create_directories(dir);
  const std::string db = (dir / "r.db").string();
  ASSERT_EQ(run("sweep aipod-16k --study design --vary topology.gpus=1024,2048 --results " + db).status, 0);
  std::filesystem::remove(db + "-shm");
  std::filesystem::remove(db + "-wal");
  std::filesystem::permissions(dir, std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec |
                                        std::filesystem::perms::group_read | std::filesystem::perms::group_exec |
                                        std::filesystem::perms::others_read | std::filesystem::perms::others_exec);
  std::string as;
  if (::geteuid() == 0) {
    if (run_shell("runuser -u nobody -- true").status != 0) GTEST_SKIP() << "runuser -u nobody unavailable";
    as = "runuser -u nobody -- ";
  }
  const Result r = run_shell(as + PODNET_BINARY + " sweep --results " + db, true);
  std::filesystem::permissions(dir, std::filesystem::perms::owner_all);
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(has(r, "design study, 2 points stored")) << r.out;
}

TEST(HostileInput, APartitionedSimaiFabricIsAnInputError) {
  const auto dir = temp_dir("podnet_hostile");
  // Two 1-GPU servers, each on its own switch, and no link between the switches.
  const std::string topo =
      write_file(dir, "split.topo", "4 1 0 2 2 H100\n2 3\n0 2 400Gbps 0.001ms 0\n1 3 400Gbps 0.001ms 0\n");
  const Result r = run("train aipod-16k --simai-topology " + topo, true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r, "split.topo: the fabric is in 2 parts that no link joins (GPU 0; GPU 1)")) << r.out;
}

TEST(HostileInput, ServeBindNamesTheAddressNotThePort) {
  Result r = run("serve --bind nope --port 0", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r, "--bind nope: not an IP address")) << r.out;
  EXPECT_FALSE(has(r, "using it")) << r.out;
  r = run("serve --bind 192.0.2.1 --port 0", true);  // TEST-NET-1: never this machine's
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r, "--bind 192.0.2.1: not an address of this machine")) << r.out;
}

TEST(HostileInput, CalibrateRefusesAnHourPerCollectiveAndUnboundedLogs) {
  const auto dir = temp_dir("podnet_hostile");
  const std::string head =
      "# nThread 1 nGpus 8 minBytes 134217728 maxBytes 4294967296 step: 2(factor) warmup iters: 5 iters: 2\n"
      "#                                                              out-of-place                       in-place\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw "
      "#wrong\n"
      "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n";
  const std::string row = "   134217728      33554432     float     sum      -1    613.3  218.85  382.99      0    "
                          "614.3  218.48  382.34      0\n";
  // 1e308 us was fitted and printed "rms -%".
  const std::string huge = head +
                           "   134217728      33554432     float     sum      -1    1e308  218.85  382.99      0    "
                           "614.3  218.48  382.34      0\n";
  Result r =
      run("calibrate aipod-16k --op allreduce --engine analytical --nccl-tests " + write_file(dir, "huge.log", huge),
          true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r, "huge.log:5: out-of-place time '1e308' us is over an hour")) << r.out;
  // 2,000 rows took 17 s, 200,000 would take an hour: at most 512 rows are fitted.
  std::string many = head;
  for (int i = 0; i < 600; ++i) many += row;
  r = run("calibrate aipod-16k --op allreduce --engine analytical --nccl-tests " + write_file(dir, "many.log", many),
          true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r, "calibrate: the logs give 600 rows to fit, at most 512 are fitted")) << r.out;
}

TEST(HostileInput, ErrorsNameThePlaceTheUserChanged) {
  const auto dir = temp_dir("podnet_hostile");
  // A bad failures: entry of a --config-add file was reported against the built-in scenario.
  const std::string frag = write_file(dir, "frag.yaml", "failures:\n  - {link: nope, at: 1ms}\n");
  Result r = run("train aipod-16k --config-add " + frag, true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r, frag + ":2: failures[0]")) << r.out;
  // A fragment's unknown section was reported at line 0.
  const std::string frag2 = write_file(dir, "frag2.yaml", "network: {engine: flow}\nx: &n {engine: flow}\n");
  r = run("design aipod-16k --config-add " + frag2, true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r, frag2 + ":2: x: unknown key")) << r.out;
  // A job too large for its GPUs after --set workload.layers was blamed on the file's workload.tp.
  r = run("train aipod-16k --set workload.layers=100000", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r, "--set workload.layers: the job (a model from llama3-405b, TP8 x PP16 x DP128) needs 63,465.1 GB "
                     "per GPU"))
      << r.out;
  // --vary labels its own errors, also those found when a point runs.
  r = run("sweep aipod-16k --study train --vary workload.layers=100000 --results " + (dir / "l.db").string(), true);
  EXPECT_TRUE(has(r, "point 0: --vary workload.layers: the job (")) << r.out;
  // A bad NCCL_ALGO list: its key and place, exit 2.
  r = run("bench aipod-16k --max 1MiB --set collective.algorithms=bogus", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r, "--set collective.algorithms: 'bogus' is not valid: unknown algorithm 'bogus'")) << r.out;
  // Failures with the analytical engine, faults with the flow engine: both keys' places. (The link's name is checked
  // first, by every command: it is a real one here.)
  const std::string fa =
      write_file(dir, "fa.yaml",
                 "schema_version: 1\ntopology: {family: fat_tree, gpus: 64}\nnetwork: {engine: "
                 "analytical}\nfailures:\n  - {link: \"leaf-000:Ethernet1/1\", at: 1ms, action: down}\n");
  r = run("bench " + fa + " --max 1MiB", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r, fa + ":4: failures: failures other than slow GPUs are injected by the flow and packet engines"))
      << r.out;
  EXPECT_TRUE(has(r, "this run's engine is analytical (" + fa + ":3: network.engine;")) << r.out;
  const std::string fl = write_file(dir, "fl.yaml",
                                    "schema_version: 1\ntopology: {family: fat_tree, gpus: 64}\nnetwork: {engine: "
                                    "flow}\nfaults:\n  - {kind: drop, link: \"leaf-000:Ethernet1/1\", probability: "
                                    "0.01}\n");
  r = run("bench " + fl + " --max 1MiB", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r, fl + ":4: faults: drop link")) << r.out;
  EXPECT_TRUE(
      has(r, "is simulated by the packet engine only; this run's engine is flow (" + fl + ":3: network.engine;"))
      << r.out;
  // A failure without `at` said "expected the time of the event, " and stopped.
  r = run("train aipod-16k --set 'failures+={link: leaf-000:Ethernet1/1}'", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r, "missing: expected the time of the event (e.g. at: 5ms)")) << r.out;
}

}  // namespace

// From a new user's audit: a switch buffer that cannot hold a packet ran forever (lossy: every packet dropped
// and resent) or finished with an empty queue (lossless); 0B meant the default. Both are refused before the
// run. By hand: a 4,096 B MTU plus 82 B of headers is a 4,178 B packet; the shared pool admits it once 1/8 of
// the free space holds it: 8 x 4,178 = 33,424 B = 33.4 KB, the least a lossy switch takes.
TEST(HostileInput, ASwitchBufferMustHoldAPacket) {
  const std::string incast =
      "bench leafspine-8k --op incast --gpus 0-56:8 --min 1MiB --max 1MiB --engine packet --set network.pfc=false ";
  Result r = run(incast + "--set network.switch_buffer=1KB", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r, "network.switch_buffer: 1.0 KB leaves su000-leaf-r0 no room for a packet: its shared pool takes "
                     "a 4,178 B packet once a 1/8 share of the free space holds it, so it needs at least 33.4 KB"))
      << r.out;
  r = run(incast + "--set network.switch_buffer=0B", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r, "--set network.switch_buffer: '0B' is not valid: expected a size from 1B to")) << r.out;
  // Lossless: the queues' reserves come first (128 x 4,096 B = 524.3 KB, plus the 33.4 KB).
  r = run("bench leafspine-8k --op incast --gpus 0-56:8 --min 1MiB --max 1MiB --engine packet --set "
          "network.switch_buffer=1KB",
          true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r, "network.switch_buffer: 1.0 KB leaves su000-leaf-r0 no room for a packet: its shared pool takes "
                     "a 4,178 B packet once a 1/8 share of the free space holds it, after 524.3 KB of reserves for "
                     "its 128 lossless queues, so it needs at least 557.7 KB"))
      << r.out;
  // A marking band upside down names the user's own top when they set it (it named DCTCP's).
  r = run(incast + "--set network.cc=dctcp --set network.ecn_kmin=200KB --set network.ecn_kmax=50KB", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r, "network.ecn_kmin: 200.0 KB is above network.ecn_kmax, 50.0 KB")) << r.out;
  // resolve runs nothing: its note speaks of the scenario, not of "this run".
  r = run("resolve leafspine-8k --set network.switch_buffer=2MB", true);
  EXPECT_TRUE(has(r, "network.switch_buffer applies on the packet engine only; the scenario runs on the flow engine"))
      << r.out;
}
