// Tenants' servers, VNIs and route targets (topology/tenants.hpp), counted by hand.
#include "topology/tenants.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "topology/builders.hpp"

namespace podnet::topology {
namespace {

TEST(Tenants, TakeWholeServersInOrder) {
  // 64 GPUs, 8 a server: 8 servers. 20 GPUs round up to 3 servers; 50 % is 32 GPUs, 4 servers; 1 is left.
  const Topology t = build_with("rail_clos", {{"gpus", "64"}}, default_hardware());
  ASSERT_EQ(t.servers, 8);
  const auto x = plan_tenants(t, {{"a", 20, -1}, {"b", 0, 0.5}}, 4200000000);
  ASSERT_EQ(x.size(), 2u);
  EXPECT_EQ(x[0].vrf, "Vrf-a");
  EXPECT_EQ(x[0].vni, 10001);
  EXPECT_EQ(x[0].route_target, "4200000000:10001");
  EXPECT_EQ(x[0].first_server, 0);
  EXPECT_EQ(x[0].servers, 3);
  EXPECT_EQ(x[0].asked_gpus, 20);  // rounded up to 24 in whole servers
  EXPECT_EQ(x[1].first_server, 3);
  EXPECT_EQ(x[1].servers, 4);
  EXPECT_EQ(x[1].route_target, "4200000000:10002");
  EXPECT_EQ(tenant_of(x, 2), &x[0]);
  EXPECT_EQ(tenant_of(x, 6), &x[1]);
  EXPECT_EQ(tenant_of(x, 7), nullptr);  // the server left over: the default VRF
}

TEST(Tenants, ThatDoNotFitAreRefusedNamingTheEntry) {
  const Topology t = build_with("rail_clos", {{"gpus", "64"}}, default_hardware());
  try {
    plan_tenants(t, {{"a", 40, -1}, {"b", 32, -1}}, 4200000000);
    FAIL() << "expected a ParamError";
  } catch (const ParamError& e) {
    EXPECT_EQ(e.key(), "tenants[1].gpus");
    EXPECT_NE(std::string(e.what()).find("tenant b needs 4 servers for its 32 GPUs (8 a server), but only 3 of "
                                         "the fabric's 8 are left"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace podnet::topology
