// An event queue with at most one event per object, replaced in place.
//
// EventQueue cancels lazily: a consumer whose pending event is superseded
// pushes a new one and leaves the old one in the heap, stale, to be skipped
// on pop or compacted away. When most pushes supersede an earlier event (the
// flow engine re-predicts a flow's completion every time its rate changes,
// tens of millions of times in a large all-to-all) the heap fills with stale
// entries: it grows to several times the live events, and popping and
// compacting them costs a pass over all of them. Here each object (a dense
// id 0..n-1) has one slot: set() inserts its event or moves it in place
// (sifting up or down from where it sits), erase() removes it, and the heap
// holds live events only. A position index per object finds its entry (the
// indexed binary heap, e.g. Sedgewick & Wayne, "Algorithms", 4th ed.,
// sec. 2.4, "Index priority queue").
//
// Order: (time, seq), the order of EventQueue. The caller supplies seq,
// normally from the EventQueue it runs beside (EventQueue::take_seq()), so
// that the two queues interleave exactly as one queue would: an event set
// here pops where EventQueue would have popped it had it been pushed at the
// same moment. Equal times pop in seq order on every machine and standard
// library; the heap layout never shows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/error.hpp"
#include "core/units.hpp"

namespace podnet {

class IndexedEventQueue {
 public:
  struct Entry {
    Time time;
    uint64_t seq = 0;
    uint32_t id = 0;    // the object the event belongs to
    uint32_t kind = 0;  // consumer-defined dispatch code
  };

  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  bool contains(uint32_t id) const { return id < pos_.size() && pos_[id] != kNone; }
  // The earliest entry. Precondition: !empty().
  const Entry& top() const { return heap_.front(); }
  // Time of the earliest event, or Time::max() when empty.
  Time next_time() const { return heap_.empty() ? Time::max() : heap_.front().time; }

  // Sets object id's event (inserting it, or replacing the one it has).
  void set(uint32_t id, Time time, uint64_t seq, uint32_t kind) {
    if (id == kNone) throw Error("IndexedEventQueue::set: id out of range");
    if (id >= pos_.size()) pos_.resize(static_cast<size_t>(id) + 1, kNone);
    const Entry e{time, seq, id, kind};
    uint32_t i = pos_[id];
    if (i == kNone) {
      i = static_cast<uint32_t>(heap_.size());
      heap_.push_back(e);
      sift_up(i, e);
      return;
    }
    // The new entry goes up if it pops before its parent, else down (the
    // old entry itself need not be read: it is overwritten either way).
    if (i > 0 && before(e, heap_[parent(i)])) {
      sift_up(i, e);
    } else {
      sift_down(i, e);
    }
  }

  // Memory hints for a caller about to set() or erase() many ids in turn
  // (each id's slot and entry are memory accesses of their own): request
  // id's slot some ids ahead, then its entry and parent a few ids ahead, so
  // that the accesses overlap. No effect on the contents.
  [[gnu::always_inline]] void prefetch_slot(uint32_t id) const {
    if (id < pos_.size()) __builtin_prefetch(&pos_[id]);
  }
  [[gnu::always_inline]] void prefetch_entry(uint32_t id) const {
    if (!contains(id)) return;
    const uint32_t i = pos_[id];
    __builtin_prefetch(&heap_[i]);
    if (i > 0) __builtin_prefetch(&heap_[parent(i)]);
  }

  // Removes object id's event; returns false when it had none.
  bool erase(uint32_t id) {
    if (!contains(id)) return false;
    const uint32_t i = pos_[id];
    pos_[id] = kNone;
    const Entry last = heap_.back();
    heap_.pop_back();
    if (i < heap_.size()) {
      // The last entry fills the hole: it may belong above or below it.
      if (i > 0 && before(last, heap_[parent(i)])) {
        sift_up(i, last);
      } else {
        sift_down(i, last);
      }
    }
    return true;
  }

  // Removes and returns the earliest event. Throws Error when empty.
  Entry pop() {
    if (heap_.empty()) throw Error("IndexedEventQueue::pop on an empty queue");
    const Entry out = heap_.front();
    erase(out.id);
    return out;
  }

  // (time, seq) order: true when x pops before y.
  static bool before(const Entry& x, const Entry& y) {
    return x.time.ps < y.time.ps || (x.time.ps == y.time.ps && x.seq < y.seq);
  }

 private:
  static constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
  static uint32_t parent(uint32_t i) { return (i - 1) / 2; }

  void place(uint32_t i, const Entry& e) {
    heap_[i] = e;
    pos_[e.id] = i;
  }
  // Puts e at the hole i or above it, moving larger parents down.
  void sift_up(uint32_t i, const Entry& e) {
    while (i > 0) {
      const uint32_t p = parent(i);
      if (!before(e, heap_[p])) break;
      place(i, heap_[p]);
      i = p;
    }
    place(i, e);
  }
  // Puts e at the hole i or below it, moving smaller children up.
  void sift_down(uint32_t i, const Entry& e) {
    const size_t n = heap_.size();
    for (;;) {
      size_t c = 2 * static_cast<size_t>(i) + 1;
      if (c >= n) break;
      if (c + 1 < n && before(heap_[c + 1], heap_[c])) ++c;
      if (!before(heap_[c], e)) break;
      place(i, heap_[c]);
      i = static_cast<uint32_t>(c);
    }
    place(i, e);
  }

  std::vector<Entry> heap_;
  std::vector<uint32_t> pos_;  // per id: its entry's index in heap_, or kNone
};

}  // namespace podnet
