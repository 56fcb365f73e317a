// Partition: how the partitioned packet engine cuts a fabric, orders its
// events and hands them between threads (a conservative parallel
// discrete-event simulation, synchronised in windows).
//
// Units. The fabric is cut into units that do not depend on the thread
// count: two nodes joined by a link are in one unit unless both are
// switches of different pods (a fat-tree's aggregation and core tiers, a
// Clos's spine and super-spine tiers), or, where the leaves share one pod,
// of different aggregation groups (a two-tier Clos's leaves and spines, a
// dragonfly's global links), or, where they share one group too, unless
// both are switches. A switch with no pod (group) is a unit of its own. A
// server stays whole with its leaves; a torus is one unit. The links
// between units are the cut; the lookahead L is the smallest latency of a
// cut link (every event one unit makes for another arrives at least L
// later: a packet, a PAUSE frame, a credit), and no more than the shortest
// in-server link's (a completion is reported after that hop, so it never
// falls inside the window that made it). Threads take contiguous runs of
// units of about equal ports.
//
// Order. Every event carries a key: its pushing unit in the high bits and
// that unit's own count below (the coordinator's: a count per unit it
// pushes to; how two units' events interleave changes nothing). Events run
// in (time, key) order in every unit, whatever thread runs it, so a run is
// the same for every thread count. (The sequential engine orders by one global push count instead:
// the same events at the same instant may run in another order, so results
// differ slightly from it; docs/contributing/validation/packet-engine.md,
// "The partitioned engine", measures by how much.)
//
// Windows. From the earliest pending event S, every thread runs its events
// before W = min(S + L, the next event of the coordinator) and sends what it
// made for other threads to their mailboxes; a barrier; the mailboxes are
// emptied into the queues. The coordinator owns the events that call back
// into the plan (a stream's completion or progress, a timer, a telemetry
// sample) and runs them between windows, at their own time, with every
// thread stopped. A callback that starts a stream earlier than the window
// the threads have already run (a completion inside the window just run)
// starts it at the window's end: the clamp, at most L per dependency,
// counted in the run's totals (SimStats::clamped, clamped_time). Only a
// route with no in-server hop after its last network link (a torus chip)
// can be late.
//
// Ranks. Under mpirun (core/mpi_world.hpp) the lanes are spread over the
// processes: rank r runs a contiguous run of them, on its own threads.
// Every rank builds the whole fabric and runs the coordinator: the plan's
// callbacks run on every rank, on the same events, in the same order. At
// a window's end the ranks swap what their lanes mailed to another rank's
// lanes, send every rank the events for the coordinator, and tell each
// other the earliest event they hold (a status and an all-to-all: two
// collectives per window). The coordinator's push to another rank's lane
// is that rank's to keep: its key comes from a count per target unit, so a
// rank whose copy of that unit's state is stale (the coordinator's
// pipeline release reads it) cannot shift the keys of the others. The
// receiver progress of pipelined streams (the coordinator reads it) is
// sent to every rank each window. At the end the counters are summed (each
// written by one rank) and peaks take the largest, so every rank holds the
// same results; rank 0 writes them. Every rank holds the whole fabric's
// memory: ranks share the work, not the memory.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <thread>
#include <vector>

#include "engine/packet/lane.hpp"
#include "engine/packet/nic.hpp"
#include "engine/packet/packet.hpp"
#include "topology/topology.hpp"

namespace podnet::engine::packet {

// The units of a fabric (above): every node's, numbered from 0 in node order; `units` gets their count.
std::vector<int32_t> partition_units(const topology::Topology& topo, int32_t& units);

struct Partition {
  int32_t lanes = 1;      // worker lanes (threads); the coordinator is lane `lanes`
  int32_t units = 1;      // the coordinator's unit is `units`
  int64_t lookahead = 0;  // ps: the smallest latency of a cut link
  std::vector<int32_t> unit_of_node;
  std::vector<int32_t> unit_from, unit_to;  // per directed link: the unit of its near and its far end
  const std::vector<Qp>* qps = nullptr;     // a QP's unit: its first port's (Qp::inj_port)
  std::vector<int32_t> unit_pacer;          // per receiver-credit pacer: its NIC's unit
  std::vector<int32_t> lane_of;             // per unit (and the coordinator's): the lane that runs it
  std::vector<uint64_t> next_key;           // per unit: its next event key
  std::vector<uint64_t> coord_key;          // per unit (and the coordinator's): the coordinator's next key for it
  std::vector<Lane*> lane_ptr;              // workers, then the coordinator
  // What each unit holds and did (the same on every thread count; packet_bench's projection of the
  // speed-up): its ports, the events it ran, and the events it made for another unit.
  std::vector<int64_t> unit_ports;
  std::vector<uint64_t> unit_events, unit_cross;
  // Windows run so far. A lane mails events into the boxes of the window's parity and, at the start of a
  // window, empties the boxes of the other parity (filled in the window before): no box is written and
  // emptied at once.
  uint32_t window = 0;

  // Ranks (above). One rank: every lane is this process's.
  int32_t ranks = 1, rank = 0;
  int32_t first_lane = 0, end_lane = 1;  // this rank's lanes
  std::vector<int32_t> rank_of_lane;
  std::vector<uint8_t> unit_mine;  // per unit: run on this rank
  // The earliest event the coordinator pushed to a lane since the last exchange (every rank sees the same).
  int64_t pushed_min = std::numeric_limits<int64_t>::max();
  bool mine(int32_t lane) const { return lane >= first_lane && lane < end_lane; }
  // The events (and progress records) this rank sent the others (packet_bench prints it).
  uint64_t sent = 0;

  static constexpr int kKeyBits = 40;

  // Units to `lanes` threads: contiguous runs of about equal weight (ports); the coordinator's unit last.
  static std::vector<int32_t> assign(const std::vector<int64_t>& weight, int32_t lanes) {
    std::vector<int32_t> lane_of(weight.size() + 1, 0);
    int64_t total = 0;
    for (const int64_t w : weight) total += w;
    int64_t run = 0;
    for (size_t u = 0; u < weight.size(); ++u) {
      const int64_t mid = run + weight[u] / 2;
      lane_of[u] = static_cast<int32_t>(std::min<int64_t>(lanes - 1, total > 0 ? mid * lanes / total : 0));
      run += weight[u];
    }
    lane_of[weight.size()] = lanes;
    return lane_of;
  }

  // The unit whose state an event changes.
  int32_t unit_of(const Event& e) const {
    switch (e.kind & 0xFF) {
      case kArrive: return unit_to[static_cast<uint32_t>(e.b >> 32)];
      case kKick:
      case kPause:
      case kCredit:
      case kStorm: return unit_from[e.a];
      case kPauseRefresh: return unit_to[e.a];
      case kQpStart:
      case kRto:
      case kCcTimer: return unit_from[static_cast<size_t>((*qps)[e.a].inj_port)];
      case kPullPace: return unit_pacer[e.a];
      default: return units;  // kDone, kTimer, kProgress, kSample: the coordinator
    }
  }
};

// A barrier for the lanes' windows: threads spin on a generation count, yielding the core after a while.
// (A window is microseconds. Sleeping on a futex instead made a 1,024-host run 1.6x slower: every wake-up
// costs tens of microseconds.)
class SpinBarrier {
 public:
  explicit SpinBarrier(int32_t n) : n_(n) {}
  void arrive_and_wait() {
    const uint32_t g = gen_.load(std::memory_order_acquire);
    if (count_.fetch_add(1, std::memory_order_acq_rel) == n_ - 1) {
      count_.store(0, std::memory_order_relaxed);
      gen_.store(g + 1, std::memory_order_release);
      return;
    }
    for (int spins = 0; gen_.load(std::memory_order_acquire) == g; ++spins)
      if (spins > 4000) std::this_thread::yield();
  }

 private:
  const int32_t n_;
  std::atomic<int32_t> count_{0};
  std::atomic<uint32_t> gen_{0};
};

inline void Lane::push(Time time, uint32_t kind, uint64_t a, uint64_t b, uint32_t tag) {
  if (part == nullptr) {
    events.push(time, kind, a, b, tag);
    return;
  }
  Event e;
  e.time = time;
  e.kind = kind;
  e.tag = tag;
  e.a = a;
  e.b = b;
  const int32_t target = part->unit_of(e);
  const bool coordinator = id == part->lanes;
  e.seq = coordinator ? part->coord_key[static_cast<size_t>(target)]++ : part->next_key[static_cast<size_t>(unit)]++;
  if (target != unit) ++part->unit_cross[static_cast<size_t>(unit)];
  const int32_t to = part->lane_of[static_cast<size_t>(target)];
  if (to == id) {
    events.push_event(e);
  } else if (coordinator) {  // every lane stopped: straight into the lane's queue (another rank's: its own push)
    if (e.time.ps < frontier) {
      ++clamped;
      clamped_ps += frontier - e.time.ps;
      e.time.ps = frontier;
    }
    part->pushed_min = std::min(part->pushed_min, e.time.ps);
    if (part->mine(to)) part->lane_ptr[static_cast<size_t>(to)]->events.push_event(e);
  } else {
    mail[(part->window & 1) * (static_cast<size_t>(part->lanes) + 1) + static_cast<size_t>(to)].push_back(e);
    int64_t& m = mail_min[static_cast<size_t>(to)];
    if (e.time.ps < m) m = e.time.ps;
  }
}

}  // namespace podnet::engine::packet
