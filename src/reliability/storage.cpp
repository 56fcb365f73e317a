#include "reliability/storage.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "core/error.hpp"
#include "core/units.hpp"

namespace podnet::reliability {

std::vector<ParamSpec> storage_params() {
  return {
      {"frontend_nics", ParamType::Int, "0",
       "frontend NICs per server toward storage (0: no storage network; reliability keeps its constant checkpoint "
       "and restart costs)",
       0, 64},
      {"frontend_nic_speed", ParamType::Bandwidth, "200Gbps", "line rate of one frontend NIC"},
      {"efficiency", ParamType::Real, "0.9", "share of a frontend NIC's line rate a storage protocol sustains", 0.01,
       1},
      {"write_bandwidth_per_server", ParamType::Bandwidth, "1GB/s",
       "what the storage writes for each server of the job at once (Llama 3's Tectonic: 2 TB/s for 2,048 servers)"},
      {"read_bandwidth_per_server", ParamType::Bandwidth, "3.4GB/s",
       "what the storage reads for each server at once (Tectonic's peak: 7 TB/s for 2,048 servers)"},
      {"checkpoint_overhead", ParamType::Time, "30s",
       "a save or a load besides moving its bytes: barriers, metadata, the data loader's state (ByteCheckpoint)"},
      {"restart_overhead", ParamType::Time, "5min",
       "a restart besides reading the checkpoint: detect the failure, reschedule, start the processes"},
      {"checkpoint_mode",
       ParamType::String,
       "sync",
       "sync: the job stops while the checkpoint is written; async: it stops only to copy to host memory, and "
       "the write runs behind training",
       -1e300,
       1e300,
       {"sync", "async"}},
      {"snapshot_bandwidth", ParamType::Bandwidth, "25GB/s",
       "async: one GPU's copy of its shards to host memory (half a PCIe Gen5 x16 link: two GPUs share one)"},
  };
}

StorageConfig storage_from(const Params& p) {
  StorageConfig c;
  c.frontend_nics = p.get_int("frontend_nics");
  c.frontend_nic_bps = p.get_bandwidth("frontend_nic_speed").bps;
  c.efficiency = p.get_real("efficiency");
  c.write_Bps_per_server = p.get_bandwidth("write_bandwidth_per_server").bps / 8;
  c.read_Bps_per_server = p.get_bandwidth("read_bandwidth_per_server").bps / 8;
  c.checkpoint_overhead_s = p.get_time("checkpoint_overhead").seconds();
  c.restart_overhead_s = p.get_time("restart_overhead").seconds();
  c.async = p.get_string("checkpoint_mode") == "async";
  c.snapshot_Bps = p.get_bandwidth("snapshot_bandwidth").bps / 8;
  if (c.snapshot_Bps <= 0) throw ParamError("storage.snapshot_bandwidth", "expected a bandwidth above 0");
  for (const auto& [key, v] : {std::pair{"storage.checkpoint_overhead", c.checkpoint_overhead_s},
                               std::pair{"storage.restart_overhead", c.restart_overhead_s}})
    if (v < 0 || v > 24 * 3600.0) throw ParamError(key, "expected 0 to 24h");
  return c;
}

CheckpointIo checkpoint_io(double bytes, int64_t servers, const StorageConfig& c) {
  CheckpointIo io;
  io.bytes = bytes;
  const double n = static_cast<double>(std::max<int64_t>(1, servers));
  io.frontend_Bps = n * static_cast<double>(c.frontend_nics) * c.frontend_nic_bps / 8 * c.efficiency;
  io.storage_write_Bps = n * c.write_Bps_per_server;
  io.storage_read_Bps = n * c.read_Bps_per_server;
  io.overhead_s = c.checkpoint_overhead_s;
  const double w = std::min(io.frontend_Bps, io.storage_write_Bps), r = std::min(io.frontend_Bps, io.storage_read_Bps);
  io.write_s = io.overhead_s + (w > 0 ? bytes / w : 0);
  io.read_s = io.overhead_s + (r > 0 ? bytes / r : 0);
  io.write_bound = io.frontend_Bps <= io.storage_write_Bps ? "the servers' frontend NICs" : "the storage";
  io.read_bound = io.frontend_Bps <= io.storage_read_Bps ? "the servers' frontend NICs" : "the storage";
  return io;
}

}  // namespace podnet::reliability
