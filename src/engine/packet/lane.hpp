// Lane: the state one thread of the packet engine owns while it runs
// events: its event queue, its counters, its clock and its scratch space.
//
// The sequential engine has one lane. The partitioned engine (partition.hpp)
// has one per thread plus the coordinator's, whose queue holds the events
// that call back into the plan (completions, timers, progress, samples).
// The components (ports, switch buffers, NICs) are shared by every lane:
// each touches only the state of the nodes its partitions hold, and reaches
// the lane of the thread it runs on through `lane()` (a thread-local
// pointer, set for the duration of every call into the engine by LaneScope).
#pragma once

#include <cstdint>
#include <vector>

#include "engine/packet/event_wheel.hpp"
#include "engine/packet/packet.hpp"
#include "engine/packet/packet_sim.hpp"
#include "routing/route.hpp"

namespace podnet::engine::packet {

struct Partition;

// A control packet a NIC made (ACK, NACK, CNP, ...) and the port it leaves on.
struct Ctrl {
  routing::DirLink port;
  Packet k;
};

struct Lane {
  EventWheel events;
  SimStats stats;
  int64_t now = 0;
  int64_t last_tx = 0;         // the last data packet this lane put on a wire
  int64_t paused_ports = 0;    // ports of this lane whose data class is paused now
  int64_t reorder_sum_ps = 0;  // receivers: the reorder delays summed (SimStats::mean_reorder_delay_ps)
  uint32_t echo_slot = 0;      // receiver: the INT slot + 1 of the data packet being answered (0: none)
  int32_t reply_via = -1;      // receiver, multi-plane NIC: its port into the plane of the packet answered (nic.hpp)
  int32_t redirect = -1;       // sender, routing mrc: the port the packet just made belongs on (nic.hpp)
  std::vector<Ctrl> outbox;    // control packets the NIC made, for the core to queue
  std::vector<routing::DirLink> cand, ties;
  std::vector<routing::PathPart> scratch;

  // ---- partitioned runs only (part != nullptr; partition.hpp)
  Partition* part = nullptr;
  int32_t id = 0;          // the lane's index; the coordinator's is the lane count
  int32_t unit = 0;        // the partition unit of the event being run (its pushes take that unit's keys)
  int64_t frontier = 0;    // coordinator: every lane has run its events before this time
  int64_t clamped = 0;     // coordinator: events it pushed before `frontier`, moved to it
  int64_t clamped_ps = 0;  // coordinator: and the time they were moved by, summed
  // Events for other lanes: per window parity (partition.hpp), a box per lane and the coordinator's last.
  std::vector<std::vector<Event>> mail;
  std::vector<int64_t> mail_min;  // the earliest time in each mailbox (INT64_MAX: empty)

  // Schedules an event (EventWheel::push). Partitioned: the event takes the
  // next key of the unit being run and goes to the lane that owns its target.
  void push(Time time, uint32_t kind, uint64_t a = 0, uint64_t b = 0, uint32_t tag = 0);
};

inline thread_local Lane* t_lane = nullptr;
inline Lane& lane() { return *t_lane; }

// Sets the calling thread's lane for its lifetime, restoring the previous one after.
class LaneScope {
 public:
  explicit LaneScope(Lane& l) : prev_(t_lane) { t_lane = &l; }
  ~LaneScope() { t_lane = prev_; }
  LaneScope(const LaneScope&) = delete;
  LaneScope& operator=(const LaneScope&) = delete;

 private:
  Lane* prev_;
};

}  // namespace podnet::engine::packet
