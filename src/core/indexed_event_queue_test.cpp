#include "core/indexed_event_queue.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "core/event_queue.hpp"

namespace podnet {
namespace {

// (time, id) of every entry, popped until empty.
std::vector<std::pair<int64_t, uint32_t>> drain(IndexedEventQueue& q) {
  std::vector<std::pair<int64_t, uint32_t>> out;
  while (!q.empty()) {
    const IndexedEventQueue::Entry e = q.pop();
    EXPECT_FALSE(q.contains(e.id));
    out.emplace_back(e.time.ps, e.id);
  }
  return out;
}

using Popped = std::vector<std::pair<int64_t, uint32_t>>;

TEST(IndexedEventQueue, EmptyQueue) {
  IndexedEventQueue q;
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.next_time(), Time::max());
  EXPECT_FALSE(q.contains(0));
  EXPECT_FALSE(q.erase(3));
  EXPECT_THROW(q.pop(), Error);
  EXPECT_THROW(q.set(std::numeric_limits<uint32_t>::max(), Time(1), 0, 0), Error);
}

TEST(IndexedEventQueue, PopsByTimeThenSeq) {
  // Ids 0..5 at times 30, 10, 30, 20, 10, 30 ps with seqs 0..5 (id = seq).
  // Order: time 10 (ids 1, 4 by seq), 20 (id 3), 30 (ids 0, 2, 5 by seq).
  IndexedEventQueue q;
  const int64_t times[] = {30, 10, 30, 20, 10, 30};
  for (uint32_t id = 0; id < 6; ++id) q.set(id, Time(times[id]), id, 7);
  EXPECT_EQ(q.size(), 6u);
  EXPECT_EQ(q.next_time(), Time(10));
  EXPECT_EQ(q.top().kind, 7u);
  EXPECT_EQ(drain(q), (Popped{{10, 1}, {10, 4}, {20, 3}, {30, 0}, {30, 2}, {30, 5}}));
}

TEST(IndexedEventQueue, SetReplacesInPlace) {
  // Ids 0..4 at 100, 200, 300, 400, 500 ps (seqs 0..4). Then id 4 moves
  // from 500 to 50 (seq 5: now first), id 0 from 100 to 450 (seq 6: after
  // id 3's 400, and last now that 500 is gone), id 2 from 300 to 200 (seq 7:
  // ties with id 1, whose seq 1 is smaller, so after it). One entry per id:
  // the size stays 5.
  IndexedEventQueue q;
  for (uint32_t id = 0; id < 5; ++id) q.set(id, Time(100 * (id + 1)), id, 0);
  q.set(4, Time(50), 5, 0);
  q.set(0, Time(450), 6, 0);
  q.set(2, Time(200), 7, 0);
  EXPECT_EQ(q.size(), 5u);
  EXPECT_EQ(drain(q), (Popped{{50, 4}, {200, 1}, {200, 2}, {400, 3}, {450, 0}}));
}

TEST(IndexedEventQueue, ReplacedEntryTakesItsNewSeqAmongTies) {
  // Three ids at 10 ps, seqs 0, 1, 2. Re-setting id 0 at the same time with
  // seq 3 sends it behind ids 1 and 2: a new prediction pops where a fresh
  // push would, never where the superseded one sat.
  IndexedEventQueue q;
  for (uint32_t id = 0; id < 3; ++id) q.set(id, Time(10), id, 0);
  q.set(0, Time(10), 3, 0);
  EXPECT_EQ(drain(q), (Popped{{10, 1}, {10, 2}, {10, 0}}));
}

TEST(IndexedEventQueue, EraseKeepsTheRestInOrder) {
  // Ids 0..9 at 10 * (10 - id) ps (id 9 first). Erasing ids 9 (the top),
  // 4 (inside) and 0 (the last) leaves 8, 7, 6, 5, 3, 2, 1 at 20..90 ps.
  IndexedEventQueue q;
  for (uint32_t id = 0; id < 10; ++id) q.set(id, Time(10 * (10 - static_cast<int64_t>(id))), id, 0);
  EXPECT_TRUE(q.erase(9));
  EXPECT_TRUE(q.erase(4));
  EXPECT_TRUE(q.erase(0));
  EXPECT_FALSE(q.erase(4));  // already gone
  EXPECT_EQ(q.size(), 7u);
  EXPECT_EQ(drain(q), (Popped{{20, 8}, {30, 7}, {40, 6}, {50, 5}, {70, 3}, {80, 2}, {90, 1}}));
  // An erased id can be set again.
  q.set(4, Time(5), 99, 1);
  EXPECT_TRUE(q.contains(4));
  EXPECT_EQ(q.pop().seq, 99u);
}

TEST(IndexedEventQueue, InterleavesWithEventQueueAsOneLazyQueue) {
  // The flow engine's use: per object one pending event, replaced many
  // times, beside an EventQueue of other events, both numbered by the
  // EventQueue's counter. The reference is the scheme it replaces: one
  // EventQueue where a replacement is a new push and the old event goes
  // stale (version stamp). Both must pop the same events in the same order.
  // Times come from a fixed linear congruential sequence with many ties
  // (values 0..63), objects 0..49, 20,000 operations: set, erase, or an
  // unrelated event.
  EventQueue lazy;  // reference
  std::vector<uint32_t> version(50, 0);
  EventQueue others;        // the unrelated events of the new scheme
  IndexedEventQueue slots;  // the objects' events of the new scheme
  uint64_t x = 12345;
  auto next = [&x] {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return x >> 33;
  };
  std::vector<uint64_t> ref, got;  // popped seqs
  int64_t now = 0;
  for (int step = 0; step < 20000; ++step) {
    const uint64_t r = next();
    const uint32_t id = static_cast<uint32_t>(r % 50);
    const Time at(now + static_cast<int64_t>((r >> 8) % 64));
    switch ((r >> 16) % 4) {
      case 0:
      case 1: {  // set (insert or replace)
        ++version[id];
        const uint64_t seq = lazy.push(at, 1, id, 0, version[id]);
        ASSERT_EQ(others.take_seq(), seq);  // the two schemes number alike
        slots.set(id, at, seq, 1);
        break;
      }
      case 2:           // erase
        ++version[id];  // its event in `lazy` goes stale
        slots.erase(id);
        break;
      default: {  // an unrelated event
        const uint64_t seq = lazy.push(at, 2, 0);
        ASSERT_EQ(others.push(at, 2, 0), seq);
        break;
      }
    }
    if (step % 7 == 0) {  // pop one event from each scheme
      while (!lazy.empty() && lazy.top().kind == 1 && lazy.top().tag != version[lazy.top().a]) lazy.pop();
      if (!lazy.empty()) {
        const Event e = lazy.pop();
        if (e.kind == 1) ++version[e.a];  // fired: nothing of it is left
        ref.push_back(e.seq);
        now = e.time.ps;
      }
      bool from_slots = !slots.empty();
      if (from_slots && !others.empty()) {
        const IndexedEventQueue::Entry o{others.top().time, others.top().seq, 0, 0};
        from_slots = IndexedEventQueue::before(slots.top(), o);
      }
      if (from_slots) {
        got.push_back(slots.pop().seq);
      } else if (!others.empty()) {
        got.push_back(others.pop().seq);
      }
    }
  }
  EXPECT_GT(ref.size(), 2000u);
  EXPECT_EQ(got, ref);
}

}  // namespace
}  // namespace podnet
