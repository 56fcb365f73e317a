// EventWheel: the packet engine's event queue, exactly ordered by (time,
// sequence) like core/event_queue.hpp, but built for millions of pending
// events that are mostly due within microseconds.
//
// Time is cut into buckets of 2^shift ps (default 8.2 ns); bucket number
// B(t) = t >> shift. Three tiers:
//   cur   a binary min-heap on (time, seq) holding the events of the bucket
//         being drained (B = cur_abs) -- small, so it stays in cache;
//   wheel 2^bits unsorted singly linked lists, slot B & mask, for the next
//         2^bits - 1 buckets (default 262,144 buckets = 2.1 ms ahead); the list
//         nodes live in one pool with a free list, so memory follows the
//         number of pending events, not the number of slots;
//   far   a binary min-heap on (time, seq) for everything later.
// pop() takes the top of `cur`; when it is empty the next non-empty bucket
// is heapified into `cur` (every event in a later bucket or in `far` is later
// than every event in `cur`), and `far` events that come within the wheel's
// reach move into it. Sequence numbers are assigned at push, so two events at
// the same time pop in push order: the order is the same total order as
// EventQueue's. The pool and heaps keep their capacity: no allocation once warm.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/error.hpp"
#include "core/event_queue.hpp"

namespace podnet::engine::packet {

class EventWheel {
 public:
  // (8.2 ns: a training iteration's busy fabric has an event every few nanoseconds; 65.5 ns buckets held
  // 97 events on average and their heap took a third of the run: a 64-GPU iteration's CPU 10.6 -> 8.3 s.)
  explicit EventWheel(int shift = 13, int bits = 18)
      : shift_(shift), n_(int64_t{1} << bits), mask_((int64_t{1} << bits) - 1), head_(static_cast<size_t>(n_), kNil) {}

  void push(Time time, uint32_t kind, uint64_t a = 0, uint64_t b = 0, uint32_t tag = 0) {
    Event e;
    e.time = time;
    e.seq = next_seq_++;
    e.kind = kind;
    e.tag = tag;
    e.a = a;
    e.b = b;
    place(e);
    ++size_;
  }

  // An event whose sequence number the caller chose (the partitioned engine's keys: partition.hpp); it must be
  // unique among the pending ones.
  void push_event(const Event& e) {
    place(e);
    ++size_;
  }

  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }

  // The earliest event's time (the queue must not be empty). With nothing near, the earliest far event's,
  // without moving there: a caller that only looks (the partitioned engine, between windows) may push
  // earlier events next, which would otherwise all fall behind the wheel's position into `cur`'s heap
  // (a training iteration's lanes held 800 events there on average).
  Time next_time() {
    if (size_ == 0) throw Error("EventWheel::next_time on an empty queue");
    if (cur_.empty() && in_wheel_ == 0) return far_.front().time;
    while (cur_.empty()) advance();
    return cur_.front().time;
  }

  Event pop() {
    if (size_ == 0) throw Error("EventWheel::pop on an empty queue");
    while (cur_.empty()) advance();
    std::pop_heap(cur_.begin(), cur_.end(), later);
    const Event e = cur_.back();
    cur_.pop_back();
    --size_;
    return e;
  }

 private:
  static bool later(const Event& x, const Event& y) { return EventQueue::before(y, x); }

  void place(const Event& e) {
    const int64_t b = e.time.ps >> shift_;
    if (b <= cur_abs_) {
      cur_.push_back(e);
      std::push_heap(cur_.begin(), cur_.end(), later);
    } else if (b < cur_abs_ + n_) {
      uint32_t i;
      if (free_ != kNil) {
        i = free_;
        free_ = pool_[i].next;
      } else {
        i = static_cast<uint32_t>(pool_.size());
        pool_.emplace_back();
      }
      uint32_t& h = head_[static_cast<size_t>(b & mask_)];
      pool_[i].e = e;
      pool_[i].next = h;
      h = i;
      ++in_wheel_;
    } else {
      far_.push_back(e);
      std::push_heap(far_.begin(), far_.end(), later);
    }
  }

  // Moves `far` events that the wheel now reaches into it (or into `cur`).
  void pull_far() {
    while (!far_.empty() && (far_.front().time.ps >> shift_) < cur_abs_ + n_) {
      std::pop_heap(far_.begin(), far_.end(), later);
      const Event e = far_.back();
      far_.pop_back();
      place(e);
    }
  }

  void advance() {
    if (in_wheel_ == 0) {  // nothing near: jump to the earliest far event
      cur_abs_ = far_.front().time.ps >> shift_;
      pull_far();
      return;
    }
    ++cur_abs_;
    uint32_t& h = head_[static_cast<size_t>(cur_abs_ & mask_)];
    if (h != kNil) {
      for (uint32_t i = h; i != kNil;) {
        Node& nd = pool_[i];
        cur_.push_back(nd.e);
        const uint32_t nx = nd.next;
        nd.next = free_;
        free_ = i;
        i = nx;
        --in_wheel_;
      }
      h = kNil;
      std::make_heap(cur_.begin(), cur_.end(), later);
    }
    pull_far();
  }

  static constexpr uint32_t kNil = 0xFFFFFFFFu;
  struct Node {
    Event e;
    uint32_t next = kNil;
  };
  int shift_;
  int64_t n_, mask_;
  int64_t cur_abs_ = 0;
  size_t size_ = 0, in_wheel_ = 0;
  uint64_t next_seq_ = 0;
  std::vector<Event> cur_, far_;
  std::vector<uint32_t> head_;  // per slot: first node, kNil if empty
  std::vector<Node> pool_;
  uint32_t free_ = kNil;
};

}  // namespace podnet::engine::packet
