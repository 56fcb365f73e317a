// A checkpoint written to and read from the storage nodes over the frontend network (topology/frontend.hpp),
// simulated by an engine: how long its bytes take to move, and what bound them.
//
// Traffic. The job's first `servers` servers each hold bytes / servers of the checkpoint (every server
// writes its shards at once, as Megatron-LM and PyTorch DCP save) and split them evenly over their
// frontend NICs. Each client NIC (port c of C) writes its share to k = min(frontend.stripes, P) storage
// NIC ports (of P), one flow each of bytes / (C x k): ports (c x k + j) mod P for j < k, so every storage
// port takes C x k / P flows, give or take one. A read is the same flows the other way.
// Storage media: a storage node's write (read) bandwidth W, when given, bounds what its G NIC ports take
// in (send out): W / G each, set as the payload rate of the link between the port's NIC and its host.
// Engine: the scenario's, unless it is too slow for terabytes (the packet engine): then the first engine
// that models contention and is cheap enough for many runs (the flow engine), said in `engine`.
// ASSUMPTIONS: the frontend is idle besides the checkpoint (no data loading beside it); the storage
// protocol's own overhead beyond the transport's headers is not modelled (storage.efficiency applies to
// the closed form only); every flow starts at once.
#pragma once

#include <cstdint>
#include <string>

#include "engine/options.hpp"
#include "topology/frontend.hpp"

namespace podnet::study {

struct FrontendTransfer {
  double seconds = 0;      // the last byte's arrival
  double gbyte_per_s = 0;  // bytes / seconds
  std::string bound;       // what the busiest link is: "the servers' frontend NICs", "the storage nodes' media", ...
};

struct FrontendIo {
  double bytes = 0;
  int32_t servers = 0;
  int64_t flows = 0;
  std::string engine;
  FrontendTransfer write, read;
};

// Requires f.config.storage_nodes > 0 and 1 <= servers <= f.servers.
FrontendIo simulate_checkpoint(const topology::FrontendFabric& f, double bytes, int32_t servers,
                               const std::string& engine, const engine::NetworkOptions& options);

}  // namespace podnet::study
