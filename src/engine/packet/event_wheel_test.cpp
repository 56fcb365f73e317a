#include "engine/packet/event_wheel.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "core/rng.hpp"

namespace podnet::engine::packet {
namespace {

TEST(EventWheel, PopsInTheSameOrderAsTheEventQueue) {
  // Random pushes (near, same-time, far beyond the wheel) interleaved with
  // pops: both queues must yield the identical (time, seq, payload) sequence.
  EventWheel w(4, 5);  // tiny: 16 ps buckets, 32 of them, so `far` and jumps are exercised
  EventQueue q;
  Rng rng(7);
  int64_t now = 0;
  std::vector<uint64_t> a, b;
  for (int step = 0; step < 20000; ++step) {
    const uint64_t r = rng.below(10);
    if (r < 6 || q.empty()) {
      int64_t dt = static_cast<int64_t>(rng.below(4) == 0 ? rng.below(5000) : rng.below(40));
      if (rng.below(8) == 0) dt = 0;
      const auto payload = static_cast<uint64_t>(step);
      w.push(Time(now + dt), 1, payload);
      q.push(Time(now + dt), 1, payload);
    } else {
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

// The same against a wheel of 2^14 slots (four words of the slot bitmap's summary): gaps of up to twice its reach
// between bursts, so the search for the next marked slot crosses summary words, wraps around the wheel, and jumps
// to far events; next_time() is asked between pops, as the partitioned engine asks it.
TEST(EventWheel, JumpsOverEmptyBucketsInTheSameOrder) {
  EventWheel w(3, 14);  // 8 ps buckets, 16,384 of them: reach 131,072 ps
  EventQueue q;
  Rng rng(11);
  int64_t now = 0;
  for (int step = 0; step < 40000; ++step) {
    const uint64_t r = rng.below(10);
    if (r < 6 || q.empty()) {
      const uint64_t kind = rng.below(6);
      int64_t dt = kind == 0   ? static_cast<int64_t>(rng.below(262144))  // up to twice the reach
                   : kind == 1 ? static_cast<int64_t>(rng.below(131072))
                   : kind == 2 ? 0
                               : static_cast<int64_t>(rng.below(100));
      w.push(Time(now + dt), 1, static_cast<uint64_t>(step));
      q.push(Time(now + dt), 1, static_cast<uint64_t>(step));
    } else {
      ASSERT_EQ(w.next_time(), q.top().time);
      const Event x = w.pop(), y = q.pop();
      ASSERT_EQ(x.time, y.time);
      ASSERT_EQ(x.seq, y.seq);
      ASSERT_EQ(x.a, y.a);
      now = x.time.ps;
    }
  }
  while (!q.empty()) {
    const Event x = w.pop(), y = q.pop();
    ASSERT_EQ(x.seq, y.seq);
  }
  EXPECT_TRUE(w.empty());
}

}  // namespace
}  // namespace podnet::engine::packet
