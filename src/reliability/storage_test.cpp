// The storage network's checkpoint times (storage.hpp), derived by hand.
#include "reliability/storage.hpp"

#include <gtest/gtest.h>

namespace podnet::reliability {
namespace {

StorageConfig round_storage() {
  StorageConfig c;
  c.frontend_nics = 2;
  c.frontend_nic_bps = 200e9;  // 25 GB/s each
  c.efficiency = 0.8;          // 20 GB/s each, 40 GB/s a server
  c.write_Bps_per_server = 1e9;
  c.read_Bps_per_server = 50e9;
  c.checkpoint_overhead_s = 30;
  c.restart_overhead_s = 300;
  return c;
}

TEST(Storage, TheSlowerOfTheNicsAndTheStorageSetsEachDirection) {
  // 1 TB from 100 servers: the storage writes 100 GB/s (the NICs could take 4 TB/s): 10 s + 30 s.
  const CheckpointIo io = checkpoint_io(1e12, 100, round_storage());
  EXPECT_DOUBLE_EQ(io.frontend_Bps, 100 * 2 * 25e9 * 0.8);
  EXPECT_DOUBLE_EQ(io.storage_write_Bps, 100e9);
  EXPECT_DOUBLE_EQ(io.write_s, 40);
  EXPECT_EQ(io.write_bound, "the storage");
  // It reads 50 GB/s a server, more than the NICs' 40: 1 TB / 4 TB/s = 0.25 s + 30 s.
  EXPECT_DOUBLE_EQ(io.read_s, 30.25);
  EXPECT_EQ(io.read_bound, "the servers' frontend NICs");
}

TEST(Storage, NoFrontendNicsIsNoStorageNetwork) {
  StorageConfig c = round_storage();
  EXPECT_TRUE(c.present());
  c.frontend_nics = 0;
  EXPECT_FALSE(c.present());
}

}  // namespace
}  // namespace podnet::reliability
