// EventWheel: the packet engine's event queue, exactly ordered by (time,
// sequence) like core/event_queue.hpp, but built for millions of pending
// events that are mostly due within microseconds.
//
// Time is cut into buckets of 2^shift ps (default 2 ns); bucket number
// B(t) = t >> shift. Three tiers:
//   cur   the events of the bucket being drained (B = cur_abs), sorted on
//         (time, seq) when the bucket is taken, popped from the front; events
//         pushed into this bucket (or an earlier one) while it drains go to a
//         small binary min-heap beside it, and pop() takes the earlier of the
//         two fronts;
//   wheel 2^bits unsorted singly linked lists, slot B & mask, for the next
//         2^bits - 1 buckets (default 262,144 buckets = 537 us ahead); a list
//         node is a block of up to kPerBlock events, filled at the list's
//         head; the blocks live in one pool with a free list, so memory
//         follows the number of pending events, not the number of slots;
//   far   a binary min-heap on (time, seq) for everything later.
// When cur and its heap are empty the next non-empty bucket is taken (every
// event in a later bucket or in `far` is later than every event in `cur`),
// and `far` events that come within the wheel's reach move into the wheel.
// The next non-empty bucket is found in a bitmap of the slots that hold
// events (one bit a slot, and one bit per 64-slot word over it), not by
// stepping through the empty ones: a quiet stretch of a training iteration
// (compute, milliseconds) costs a few word reads, not one read per bucket.
// Stepping through empty buckets has no effect but moving `far` events in,
// which the jump does too (every far event lies beyond the wheel's reach
// from the bucket jumped from, so beyond the bucket jumped to). Sequence
// numbers are assigned at push, so two events at the same time pop in push
// order: the order is the same total order as EventQueue's. The pool, the
// bucket and the heaps keep their capacity: no allocation once warm.
//
// Sizes, measured on Llama 3 8B training iterations (TP 8 x DP 8 to 128):
// a 1,024-GPU fabric has an event every few picoseconds; 8.2 ns buckets held
// 540 events and their heap (pop, sift down) was a third of the CPU. 2 ns
// buckets with the bitmap: 256 GPUs 90 -> 73 s. Smaller buckets need more
// slots for the same reach, and the slot array then leaves the cache: 256 ps
// buckets (2^22 slots) were slower at 1,024 GPUs.
//
// Blocks, not one node per event: draining a bucket walks its list, and each
// node is a cache miss that waits on the one before (the pool is megabytes,
// reused in no order). An NSCC + REPS permutation on 1,024 hosts drains 123
// events a bucket: one node per event put a fifth of the CPU in that walk.
// A block of kPerBlock events is one wait for kPerBlock events, read in
// order. A slot with one event holds a whole block (kPerBlock x 40 bytes):
// the pool grows at most kPerBlock times for sparse slots.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/error.hpp"
#include "core/event_queue.hpp"

namespace podnet::engine::packet {

class EventWheel {
 public:
  explicit EventWheel(int shift = 11, int bits = 18)
      : shift_(shift),
        n_(int64_t{1} << bits),
        mask_((int64_t{1} << bits) - 1),
        head_(static_cast<size_t>(n_), kNil),
        used_(static_cast<size_t>((n_ + 63) / 64), 0),
        used_words_(static_cast<size_t>((n_ + 4095) / 4096), 0) {}

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
  // earlier events next, which would otherwise all fall behind the wheel's position into the heap beside `cur`
  // (a training iteration's lanes held 800 events there on average).
  Time next_time() {
    if (size_ == 0) throw Error("EventWheel::next_time on an empty queue");
    if (cur_empty() && in_wheel_ == 0) return far_.front().time;
    while (cur_empty()) advance();
    return front().time;
  }

  // The event k places after the next one in the bucket being drained, or nullptr. A hint for prefetching
  // only: an event in the heap beside the bucket may come first.
  const Event* ahead(size_t k) const { return at_ + k < cur_.size() ? &cur_[at_ + k] : nullptr; }

  Event pop() {
    if (size_ == 0) throw Error("EventWheel::pop on an empty queue");
    while (cur_empty()) advance();
    --size_;
    if (side_first()) {
      std::pop_heap(side_.begin(), side_.end(), later);
      const Event e = side_.back();
      side_.pop_back();
      return e;
    }
    return cur_[at_++];
  }

 private:
  // A function object, not a function pointer: the heap algorithms inline the comparison (through a pointer
  // each one was a call, 9 % of a 1,024-GPU training iteration's CPU).
  struct Later {
    bool operator()(const Event& x, const Event& y) const { return EventQueue::before(y, x); }
  };
  static constexpr Later later{};

  bool cur_empty() const { return at_ == cur_.size() && side_.empty(); }
  // Whether the heap beside the bucket holds the earliest event (cur_empty() is false).
  bool side_first() const {
    return !side_.empty() && (at_ == cur_.size() || EventQueue::before(side_.front(), cur_[at_]));
  }
  const Event& front() const { return side_first() ? side_.front() : cur_[at_]; }

  void place(const Event& e) {
    const int64_t b = e.time.ps >> shift_;
    if (b <= cur_abs_) {
      side_.push_back(e);
      std::push_heap(side_.begin(), side_.end(), later);
    } else if (b < cur_abs_ + n_) {
      const auto slot = static_cast<size_t>(b & mask_);
      uint32_t& h = head_[slot];
      if (h == kNil) mark(slot);
      if (h == kNil || pool_[h].n == kPerBlock) {  // a new block at the head of the slot's list
        uint32_t i;
        if (free_ != kNil) {
          i = free_;
          free_ = pool_[i].next;
        } else {
          i = static_cast<uint32_t>(pool_.size());
          pool_.emplace_back();
        }
        pool_[i].next = h;
        pool_[i].n = 0;
        h = i;
      }
      Block& blk = pool_[h];
      blk.e[blk.n++] = e;
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
    // The next bucket that holds events: slots after cur_abs_'s, cyclically (all within the wheel's reach).
    const auto from = static_cast<size_t>((cur_abs_ + 1) & mask_);
    const size_t slot = next_marked(from);
    cur_abs_ += 1 + static_cast<int64_t>((slot - from) & static_cast<size_t>(mask_));
    uint32_t& h = head_[slot];
    cur_.clear();
    at_ = 0;
    for (uint32_t i = h; i != kNil;) {
      Block& blk = pool_[i];
      const uint32_t nx = blk.next;
      if (nx != kNil) __builtin_prefetch(&pool_[nx]);
      cur_.insert(cur_.end(), blk.e, blk.e + blk.n);
      in_wheel_ -= blk.n;
      blk.next = free_;
      free_ = i;
      i = nx;
    }
    h = kNil;
    unmark(slot);
    std::sort(cur_.begin(), cur_.end(), [](const Event& x, const Event& y) { return EventQueue::before(x, y); });
    pull_far();
  }

  void mark(size_t slot) {
    uint64_t& w = used_[slot >> 6];
    if (w == 0) used_words_[slot >> 12] |= uint64_t{1} << ((slot >> 6) & 63);
    w |= uint64_t{1} << (slot & 63);
  }
  void unmark(size_t slot) {
    uint64_t& w = used_[slot >> 6];
    w &= ~(uint64_t{1} << (slot & 63));
    if (w == 0) used_words_[slot >> 12] &= ~(uint64_t{1} << ((slot >> 6) & 63));
  }
  // The first marked slot at or after `from`, wrapping around (one is marked: in_wheel_ > 0).
  size_t next_marked(size_t from) const {
    const size_t words = used_.size();
    const size_t wd = from >> 6;
    const uint64_t here = used_[wd] & (~uint64_t{0} << (from & 63));
    if (here != 0) return (wd << 6) + static_cast<size_t>(__builtin_ctzll(here));
    // The words after wd, a summary word at a time, wrapping once: back at wd, its bits below `from` count.
    size_t w = wd + 1;
    for (size_t scanned = 0; scanned <= words + 64;) {
      if (w >= words) w = 0;
      const size_t sw = w >> 6;
      const uint64_t sum = used_words_[sw] & (~uint64_t{0} << (w & 63));
      if (sum != 0) {
        const size_t w2 = (sw << 6) + static_cast<size_t>(__builtin_ctzll(sum));
        return (w2 << 6) + static_cast<size_t>(__builtin_ctzll(used_[w2]));
      }
      const size_t next = (sw + 1) << 6;
      scanned += next - w;
      w = next;
    }
    throw Error("EventWheel: no marked slot");  // unreachable while in_wheel_ > 0
  }

  static constexpr uint32_t kNil = 0xFFFFFFFFu;
  static constexpr uint32_t kPerBlock = 6;
  struct Block {
    uint32_t next = kNil;  // the block filled before this one, kNil at the list's end
    uint32_t n = 0;        // events in e
    Event e[kPerBlock];
  };
  int shift_;
  int64_t n_, mask_;
  int64_t cur_abs_ = 0;
  size_t size_ = 0, in_wheel_ = 0;
  uint64_t next_seq_ = 0;
  std::vector<Event> cur_, side_, far_;  // cur_: the bucket, sorted; [at_, end) still to pop
  size_t at_ = 0;
  std::vector<uint32_t> head_;        // per slot: its newest block (the one being filled), kNil if empty
  std::vector<uint64_t> used_;        // per slot: a bit, set while the slot holds events
  std::vector<uint64_t> used_words_;  // per word of used_: a bit, set while it is not 0
  std::vector<Block> pool_;
  uint32_t free_ = kNil;
};

}  // namespace podnet::engine::packet
