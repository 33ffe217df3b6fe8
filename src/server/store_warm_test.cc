// A store node warms its segment's pages in the background (page_warmer.h):
// every page once, with transfers running meanwhile, and not at all when
// StoreNodeOptions::warm_pages is off.
#include <gtest/gtest.h>

#include "client_test_util.h"

namespace crescent::client_test {
namespace {

TEST(StoreWarmTest, EveryNodeWarmsItsWholeSegmentWhileServing) {
  server::LocalClusterOptions o = SmallCluster(2, /*shared_memory=*/false);
  o.segment_size = uint64_t{24} << 20;
  auto cluster = StartCluster(o);
  ASSERT_NE(cluster, nullptr);
  auto client = ConnectTo(*cluster, /*use_shared_memory=*/false);
  ASSERT_NE(client, nullptr);
  // Transfers run while the warmers may still be reading the same pages.
  std::vector<std::vector<std::byte>> values;
  for (uint32_t i = 0; i < 8; ++i) {
    values.push_back(Pattern((uint64_t{1} << 20) + i, i + 1));
    PutOptions po;
    po.replica_count = 2;
    ASSERT_TRUE(client->Put("warm/" + std::to_string(i), Bytes(values.back()), po).ok());
  }
  cluster->WaitPagesWarm();
  for (size_t n = 0; n < cluster->node_count(); ++n) {
    EXPECT_EQ(cluster->node(n).warmed_bytes(), o.segment_size) << "node " << n;
  }
  for (uint32_t i = 0; i < 8; ++i) {
    auto got = client->Get("warm/" + std::to_string(i));
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(*got, values[i]) << "key " << i;
  }
}

TEST(StoreWarmTest, NoWarmingWhenTurnedOff) {
  server::LocalClusterOptions o = SmallCluster(1, /*shared_memory=*/false);
  o.warm_pages = false;
  auto cluster = StartCluster(o);
  ASSERT_NE(cluster, nullptr);
  cluster->WaitPagesWarm();  // returns at once: there is no warmer
  EXPECT_EQ(cluster->node(0).warmed_bytes(), 0u);
  auto client = ConnectTo(*cluster, false);
  ASSERT_NE(client, nullptr);
  const std::vector<std::byte> v = Pattern(4096, 9);
  ASSERT_TRUE(client->Put("cold/0", Bytes(v)).ok());
  auto got = client->Get("cold/0");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, v);
}

}  // namespace
}  // namespace crescent::client_test
