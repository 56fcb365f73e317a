// The discrete-event queue every engine runs on.
//
// A binary min-heap of small POD events ordered by (time, seq), where `seq` is
// a counter assigned at push. Two events at the same time therefore pop in the
// order they were pushed, on every machine and standard library: the order
// never depends on heap layout, pointer values or hashing.
//
// The payload is plain data (a `kind` chosen by the consumer, a 32-bit `tag`
// and two 64-bit words), so pushing allocates nothing beyond the amortised
// growth of one vector and popping makes no virtual or std::function call.
// The consumer dispatches on `kind` itself.
//
// Cancellation is lazy: a consumer that may supersede an event (a predicted
// flow completion whose rate changed, say) stores a version stamp in `tag` or
// `b`, bumps its own copy when the event becomes stale, and ignores a popped
// event whose stamp no longer matches. When stale events pile up it calls
// `remove_if` to drop them in one O(n) pass (the heap is rebuilt; pop order of
// the survivors is unchanged because (time, seq) is a total order).
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/units.hpp"

namespace podnet {

struct Event {
  Time time;
  uint64_t seq = 0;   // assigned by EventQueue::push; unique per queue, increasing
  uint32_t kind = 0;  // consumer-defined dispatch code
  uint32_t tag = 0;   // consumer-defined (e.g. a version stamp)
  uint64_t a = 0;     // consumer-defined payload
  uint64_t b = 0;
};

class EventQueue {
 public:
  // Pushes an event and returns its sequence number.
  uint64_t push(Time time, uint32_t kind, uint64_t a = 0, uint64_t b = 0, uint32_t tag = 0) {
    Event e;
    e.time = time;
    e.seq = next_seq_++;
    e.kind = kind;
    e.tag = tag;
    e.a = a;
    e.b = b;
    heap_.push_back(e);
    sift_up(heap_.size() - 1);
    return e.seq;
  }

  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  // Sequence number the next push will get (= number of pushes so far).
  uint64_t next_seq() const { return next_seq_; }
  // Takes the next sequence number without pushing: for an event kept in
  // another structure (IndexedEventQueue) that must interleave with this
  // queue's events in (time, seq) order.
  uint64_t take_seq() { return next_seq_++; }

  // The earliest event. Precondition: !empty().
  const Event& top() const { return heap_.front(); }
  // Time of the earliest event, or Time::max() when empty.
  Time next_time() const { return heap_.empty() ? Time::max() : heap_.front().time; }

  // Removes and returns the earliest event. Throws Error when empty.
  Event pop() {
    if (heap_.empty()) throw Error("EventQueue::pop on an empty queue");
    Event out = heap_.front();
    Event last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) sift_down_from_root(last);
    return out;
  }

  // Drops every event for which pred(event) is true; returns how many.
  template <class Pred>
  size_t remove_if(Pred&& pred) {
    size_t kept = 0;
    for (size_t i = 0; i < heap_.size(); ++i) {
      if (!pred(std::as_const(heap_[i]))) heap_[kept++] = heap_[i];
    }
    size_t removed = heap_.size() - kept;
    heap_.resize(kept);
    if (removed > 0) {
      for (size_t i = heap_.size() / 2; i-- > 0;) sift_down(i);
    }
    return removed;
  }

  // Drops all events (the sequence counter keeps counting).
  void clear() { heap_.clear(); }
  void reserve(size_t n) { heap_.reserve(n); }

  // (time, seq) order: true when x pops before y.
  static bool before(const Event& x, const Event& y) {
    return x.time.ps < y.time.ps || (x.time.ps == y.time.ps && x.seq < y.seq);
  }

 private:
  void sift_up(size_t i) {
    Event e = heap_[i];
    while (i > 0) {
      size_t parent = (i - 1) / 2;
      if (!before(e, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = e;
  }

  // Places `e` starting from the hole at index i, moving smaller children up.
  void sift_hole(size_t i, const Event& e) {
    const size_t n = heap_.size();
    for (;;) {
      size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && before(heap_[child + 1], heap_[child])) ++child;
      if (!before(heap_[child], e)) break;
      heap_[i] = heap_[child];
      i = child;
    }
    heap_[i] = e;
  }
  void sift_down(size_t i) { sift_hole(i, Event(heap_[i])); }
  void sift_down_from_root(const Event& e) { sift_hole(0, e); }

  std::vector<Event> heap_;
  uint64_t next_seq_ = 0;
};

}  // namespace podnet
