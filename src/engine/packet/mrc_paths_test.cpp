#include "engine/packet/mrc_paths.hpp"

#include <gtest/gtest.h>

#include <set>

namespace podnet::engine::packet {
namespace {

TEST(MrcPaths, ValuesSpreadOverThePlanesAndTakenInTurn) {
  MrcPaths m;
  m.init(12345, 4);
  std::set<uint16_t> distinct;
  for (int i = 0; i < MrcPaths::kPaths; ++i) {
    EXPECT_EQ(m.ev[static_cast<size_t>(i)] % 4, i % 4) << "value " << i << " lies in plane i mod 4";
    distinct.insert(m.ev[static_cast<size_t>(i)]);
  }
  EXPECT_EQ(distinct.size(), static_cast<size_t>(MrcPaths::kPaths));
  // Round robin: packet j takes value j mod 64, so each plane carries every fourth packet.
  for (int j = 0; j < 2 * MrcPaths::kPaths; ++j) EXPECT_EQ(m.next(0), m.ev[static_cast<size_t>(j % MrcPaths::kPaths)]);
}

TEST(MrcPaths, ALostPathRestsThenCarriesTheProbeAndAMarkedOneIsSwapped) {
  MrcPaths m;
  m.init(7, 2);
  const uint16_t lost = m.ev[1];
  m.lost(lost, 1'000);
  // Values 0, 2, 3, ..., 63, then 0 again: value 1 is skipped until 1,000 ps + 100 us.
  EXPECT_EQ(m.next(2'000), m.ev[0]);
  EXPECT_EQ(m.next(2'000), m.ev[2]);
  for (int i = 3; i < MrcPaths::kPaths; ++i) m.next(2'000);
  EXPECT_EQ(m.next(2'000), m.ev[0]);
  EXPECT_EQ(m.next(1'000 + MrcPaths::kRest), m.ev[1]) << "rested 100 us: its next packet probes it";
  // A resend takes only a value an ACK has echoed since its loss: value 1 is not one; value 2 is.
  m.echoed(m.ev[2], false);
  m.cursor = 1;
  EXPECT_EQ(m.next(1'000 + MrcPaths::kRest, true), m.ev[2]);
  // A marked echo swaps the value for a fresh one of the same plane.
  const uint16_t marked = m.ev[3];
  m.echoed(marked, true);
  EXPECT_NE(m.ev[3], marked);
  EXPECT_EQ(m.ev[3] % 2, 1);
  EXPECT_EQ(m.slot(marked), -1);
}

TEST(MrcPaths, WhenEveryPathRestsTheFirstToRecoverIsUsed) {
  MrcPaths m;
  m.init(3, 1);
  for (int i = 0; i < MrcPaths::kPaths; ++i) m.lost(m.ev[static_cast<size_t>(i)], 100 - i);
  EXPECT_EQ(m.next(0), m.ev[MrcPaths::kPaths - 1]);  // lost at 100 - 63 ps: its rest ends first
}

}  // namespace
}  // namespace podnet::engine::packet
