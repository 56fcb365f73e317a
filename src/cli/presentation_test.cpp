// What podnet prints, checked against what the run did: headers that name only what applies, ratios with
// what was asked, output paths joined as paths.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "cli/test_util.hpp"

namespace {

namespace fs = std::filesystem;
using podnet::cli::testing::Result;
using podnet::cli::testing::run;

// An incast has no ring and no tuner: its header said 'topology_aware ring order' and 'tuner: algorithms auto'.
TEST(Presentation, IncastHeaderNamesNoRingOrderNorTuner) {
  const Result r = run("bench leafspine-8k --set topology.gpus=64 --op incast --gpus 0-63:8 --min 1MiB --max 1MiB "
                       "--engine analytical");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("podnet bench: incast on 8 GPUs"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("ring order"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("tuner:"), std::string::npos) << r.out;
  // A ring all-reduce keeps both (a plan without rings, as the tuner's NVLS tree, names no ring order).
  const Result a = run(
      "bench leafspine-8k --set topology.gpus=64 --gpus 0-15 --min 1MiB --max 1MiB --engine analytical --algo ring");
  ASSERT_EQ(a.status, 0) << a.out;
  EXPECT_NE(a.out.find("ring order"), std::string::npos) << a.out;
  EXPECT_NE(a.out.find("tuner:"), std::string::npos) << a.out;
}

// 2:1 on radix-128 leaves: floor(128 x 2/3) = 85 down, 43 up, of which 40 cabled (spread evenly over the
// spines): 85 / 40 = 2.125. The table printed 2.13:1 and said why only in the notes.
TEST(Presentation, OversubscriptionSaysWhatWasAsked) {
  const Result r = run("design aipod-16k --set topology.oversubscription=2:1");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("2.125:1 (asked 2:1: leaf: 85 down / 43 up ports (40 of them cabled: 3 left idle so the "
                       "rest spread evenly))"),
            std::string::npos)
      << r.out;
  // A ratio built as asked says nothing more.
  const Result s = run("design aipod-16k");
  EXPECT_EQ(s.out.find("asked"), std::string::npos) << s.out;
}

// `--out DIR/` wrote DIR//design.json in its message.
TEST(Presentation, OutPathsAreJoinedAsPaths) {
  const fs::path d = podnet::cli::testing::temp_dir("podnet_presentation_test") / "results";
  fs::remove_all(d);
  const Result r = run("design leafspine-8k --set topology.gpus=64 --out " + d.string() + "/", true);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("podnet: wrote " + (d / "design.json").string() + ", "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("//"), std::string::npos) << r.out;
}

}  // namespace
