#include "core/event_queue.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace podnet {
namespace {

TEST(EventQueue, EmptyQueue) {
  EventQueue q;
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.size(), 0u);
  EXPECT_EQ(q.next_time(), Time::max());
  EXPECT_THROW(q.pop(), Error);
}

TEST(EventQueue, PopsInTimeOrder) {
  EventQueue q;
  // Pushed out of order: 30, 10, 50, 20, 40 ps -> must pop 10, 20, 30, 40, 50.
  for (int64_t t : {30, 10, 50, 20, 40}) q.push(Time(t), 0, static_cast<uint64_t>(t));
  EXPECT_EQ(q.size(), 5u);
  EXPECT_EQ(q.next_time(), Time(10));
  std::vector<int64_t> got;
  while (!q.empty()) {
    Event e = q.pop();
    EXPECT_EQ(static_cast<int64_t>(e.a), e.time.ps);  // payload travels with its time
    got.push_back(e.time.ps);
  }
  EXPECT_EQ(got, (std::vector<int64_t>{10, 20, 30, 40, 50}));
}

TEST(EventQueue, TiesBreakByInsertionOrder) {
  EventQueue q;
  // Five events at t = 7 ps pushed with payloads 0..4, interleaved with events
  // at other times: the t = 7 ones must come out as 0, 1, 2, 3, 4.
  q.push(Time(9), 1, 100);
  for (uint64_t i = 0; i < 5; ++i) {
    q.push(Time(7), 0, i);
    q.push(Time(3 + static_cast<int64_t>(i) * 2), 1, 200 + i);  // 3,5,7,9,11
  }
  std::vector<uint64_t> at7;
  std::vector<uint64_t> seqs;
  Time prev(0);
  while (!q.empty()) {
    Event e = q.pop();
    EXPECT_GE(e.time, prev);
    if (e.time == prev && !seqs.empty()) {
      EXPECT_GT(e.seq, seqs.back());
    }
    prev = e.time;
    seqs.push_back(e.seq);
    if (e.time == Time(7) && e.kind == 0) at7.push_back(e.a);
  }
  EXPECT_EQ(at7, (std::vector<uint64_t>{0, 1, 2, 3, 4}));
}

TEST(EventQueue, SequenceNumbersIncrease) {
  EventQueue q;
  EXPECT_EQ(q.push(Time(5), 0), 0u);
  EXPECT_EQ(q.push(Time(1), 0), 1u);
  EXPECT_EQ(q.next_seq(), 2u);
  EXPECT_EQ(q.pop().seq, 1u);  // earlier time wins over earlier seq
  EXPECT_EQ(q.pop().seq, 0u);
}

TEST(EventQueue, PayloadRoundTrip) {
  EventQueue q;
  q.push(Time(42), 7, 0xDEADBEEFCAFEULL, ~0ULL, 99u);
  Event e = q.pop();
  EXPECT_EQ(e.time, Time(42));
  EXPECT_EQ(e.kind, 7u);
  EXPECT_EQ(e.a, 0xDEADBEEFCAFEULL);
  EXPECT_EQ(e.b, ~0ULL);
  EXPECT_EQ(e.tag, 99u);
}

TEST(EventQueue, InterleavedPushPop) {
  // A simulation-like pattern: pop the earliest event, push follow-ups at or
  // after its time. Event i at time t schedules (i+1) at t+3 and, for even i,
  // an extra event at t (same time: must come after everything already queued
  // at t, because its seq is larger).
  EventQueue q;
  q.push(Time(0), 0, 0);
  std::vector<std::pair<int64_t, uint64_t>> order;
  while (!q.empty() && order.size() < 40) {
    Event e = q.pop();
    order.emplace_back(e.time.ps, e.seq);
    if (e.kind == 0 && e.a < 10) {
      q.push(e.time + Time(3), 0, e.a + 1);
      if (e.a % 2 == 0) q.push(e.time, 1, e.a);
    }
  }
  // Chain: kind-0 events a = 0..10 at t = 0,3,...,30 (11 of them; a = 10
  // schedules nothing) and kind-1 events for even a < 10, i.e. a = 0,2,4,6,8
  // at t = 0,6,12,18,24 (5 of them) -> 16 events.
  ASSERT_EQ(order.size(), 16u);
  for (size_t i = 1; i < order.size(); ++i) {
    bool ok = order[i - 1].first < order[i].first ||
              (order[i - 1].first == order[i].first && order[i - 1].second < order[i].second);
    EXPECT_TRUE(ok) << "at " << i;
  }
}

TEST(EventQueue, MatchesSortedReferenceUnderHeavyInterleaving) {
  // Deterministic pseudo-random times (a linear congruential sequence, no RNG
  // needed): every pop must equal the minimum by (time, seq) of what is queued.
  EventQueue q;
  std::vector<Event> ref;
  uint64_t x = 12345;
  auto next = [&x]() {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return x >> 33;
  };
  for (int round = 0; round < 2000; ++round) {
    int pushes = static_cast<int>(next() % 3);
    for (int k = 0; k < pushes; ++k) {
      Time t(static_cast<int64_t>(next() % 50));  // many ties
      uint64_t s = q.push(t, 0, next());
      Event e;
      e.time = t;
      e.seq = s;
      ref.push_back(e);
    }
    if (!ref.empty() && next() % 2 == 0) {
      size_t best = 0;
      for (size_t i = 1; i < ref.size(); ++i)
        if (EventQueue::before(ref[i], ref[best])) best = i;
      Event got = q.pop();
      EXPECT_EQ(got.seq, ref[best].seq);
      EXPECT_EQ(got.time, ref[best].time);
      ref.erase(ref.begin() + static_cast<std::ptrdiff_t>(best));
    }
    ASSERT_EQ(q.size(), ref.size());
  }
}

TEST(EventQueue, RemoveIfDropsStaleAndKeepsOrder) {
  // Lazy invalidation: version stamps in `tag`; the consumer's current
  // version of object a is cur[a]; events with an older stamp are stale.
  EventQueue q;
  std::vector<uint32_t> cur = {0, 0, 0};
  q.push(Time(10), 0, 0, 0, 0);  // object 0, v0 (becomes stale)
  q.push(Time(20), 0, 1, 0, 0);  // object 1, v0 (valid)
  cur[0] = 1;
  q.push(Time(15), 0, 0, 0, 1);  // object 0, v1 (valid)
  q.push(Time(5), 0, 2, 0, 0);   // object 2, v0 (becomes stale)
  cur[2] = 1;
  q.push(Time(15), 0, 2, 0, 1);  // object 2, v1 (valid, tie with object 0 at 15: pushed later)
  size_t removed = q.remove_if([&](const Event& e) { return e.tag != cur[e.a]; });
  EXPECT_EQ(removed, 2u);
  ASSERT_EQ(q.size(), 3u);
  Event e1 = q.pop(), e2 = q.pop(), e3 = q.pop();
  EXPECT_EQ(e1.time, Time(15));
  EXPECT_EQ(e1.a, 0u);
  EXPECT_EQ(e2.time, Time(15));
  EXPECT_EQ(e2.a, 2u);
  EXPECT_EQ(e3.time, Time(20));
  EXPECT_EQ(e3.a, 1u);
  EXPECT_EQ(q.remove_if([](const Event&) { return true; }), 0u);
}

TEST(EventQueue, ClearKeepsCounting) {
  EventQueue q;
  q.push(Time(1), 0);
  q.push(Time(2), 0);
  q.clear();
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.push(Time(0), 0), 2u);
}

}  // namespace
}  // namespace podnet
