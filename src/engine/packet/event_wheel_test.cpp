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

}  // namespace
}  // namespace podnet::engine::packet
