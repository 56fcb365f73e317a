#include "engine/packet/event_wheel.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "core/rng.hpp"

namespace podnet::engine::packet {
namespace {

// Random pushes (delays drawn by `delay`) interleaved with pops, into the wheel and into an EventQueue: both must
// yield the identical (time, seq, payload) sequence. With `look`, next_time() is asked before each pop, as the
// partitioned engine asks it between windows.
template <class Delay>
void expect_event_queue_order(EventWheel& w, uint64_t seed, int steps, Delay delay, bool look) {
  EventQueue q;
  Rng rng(seed);
  int64_t now = 0;
  for (int step = 0; step < steps; ++step) {
    const uint64_t r = rng.below(10);
    if (r < 6 || q.empty()) {
      const int64_t dt = delay(rng);
      const auto payload = static_cast<uint64_t>(step);
      w.push(Time(now + dt), 1, payload);
      q.push(Time(now + dt), 1, payload);
    } else {
      if (look) {
        ASSERT_EQ(w.next_time(), q.top().time);
      }
      const Event x = w.pop(), y = q.pop();
      ASSERT_EQ(x.time, y.time);
      ASSERT_EQ(x.seq, y.seq);
      ASSERT_EQ(x.a, y.a);
      now = x.time.ps;
    }
  }
  while (!q.empty()) {
    ASSERT_FALSE(w.empty());
    const Event x = w.pop(), y = q.pop();
    ASSERT_EQ(x.seq, y.seq);
  }
  EXPECT_TRUE(w.empty());
}

TEST(EventWheel, PopsInTheSameOrderAsTheEventQueue) {
  // Near, same-time and far (beyond the wheel) pushes.
  EventWheel w(4, 5);  // tiny: 16 ps buckets, 32 of them, so `far` and jumps are exercised
  expect_event_queue_order(
      w, 7, 20000,
      [](Rng& rng) {
        int64_t dt = static_cast<int64_t>(rng.below(4) == 0 ? rng.below(5000) : rng.below(40));
        if (rng.below(8) == 0) dt = 0;
        return dt;
      },
      false);
}

// The same against a wheel of 2^14 slots (four words of the slot bitmap's summary): gaps of up to twice its reach
// between bursts, so the search for the next marked slot crosses summary words, wraps around the wheel, and jumps
// to far events.
TEST(EventWheel, JumpsOverEmptyBucketsInTheSameOrder) {
  EventWheel w(3, 14);  // 8 ps buckets, 16,384 of them: reach 131,072 ps
  expect_event_queue_order(
      w, 11, 40000,
      [](Rng& rng) {
        const uint64_t kind = rng.below(6);
        return kind == 0   ? static_cast<int64_t>(rng.below(262144))  // up to twice the reach
               : kind == 1 ? static_cast<int64_t>(rng.below(131072))
               : kind == 2 ? int64_t{0}
                           : static_cast<int64_t>(rng.below(100));
      },
      true);
}

// Wide buckets (1,024 ps) and delays of up to three of them: hundreds of events wait in each slot, in lists of many
// blocks, and pushes land in the bucket being drained (the heap beside it).
TEST(EventWheel, SlotsOfManyBlocksPopInTheSameOrder) {
  EventWheel w(10, 6);  // 1,024 ps buckets, 64 of them
  expect_event_queue_order(
      w, 5, 40000, [](Rng& rng) { return rng.below(5) == 0 ? int64_t{0} : static_cast<int64_t>(rng.below(3000)); },
      false);
}

// ahead(k) (the event loop's prefetch hint) names the event k pops after the next one, while both are in
// the bucket being drained, and nothing past the bucket's end.
TEST(EventWheel, AheadNamesTheEventsTheNextPopsReturn) {
  EventWheel w(10, 6);  // 1,024 ps buckets
  // Five events at 2,548, 2,448, ..., 2,148 ps, in a later bucket than the first (events pushed into the
  // bucket being drained wait in the heap beside it), and one in another bucket.
  for (uint64_t i = 0; i < 5; ++i) w.push(Time(static_cast<int64_t>(2048 + 100 * (5 - i))), 1, i);
  w.push(Time(9000), 1, 99);
  EXPECT_EQ(w.ahead(0), nullptr);  // no bucket taken yet
  // The first pop takes the bucket and returns 2,148 ps; 2,248 to 2,548 ps are left in it.
  EXPECT_EQ(w.pop().a, 4u);
  ASSERT_NE(w.ahead(0), nullptr);
  EXPECT_EQ(w.ahead(0)->a, 3u);
  ASSERT_NE(w.ahead(3), nullptr);
  EXPECT_EQ(w.ahead(3)->a, 0u);  // 2,548 ps
  EXPECT_EQ(w.ahead(4), nullptr);
  for (uint64_t a : {3u, 2u, 1u, 0u}) EXPECT_EQ(w.pop().a, a);
  EXPECT_EQ(w.pop().a, 99u);
}

}  // namespace
}  // namespace podnet::engine::packet
