// A store node warms its segment's pages in the background (page_warmer.h):
// every page once, with transfers running meanwhile, and not at all when
// StoreNodeOptions::warm_pages is off.
#include <gtest/gtest.h>

#include "client/client_test_util.h"

namespace crescent::client_test {
namespace {

class StoreWarmTest : public ClusterTest {};

TEST_F(StoreWarmTest, EveryNodeWarmsItsWholeSegmentWhileServing) {
  server::LocalClusterOptions o = SmallCluster(2, /*shared_memory=*/false);
  o.segment_size = uint64_t{24} << 20;
  ASSERT_NO_FATAL_FAILURE(StartAndConnect(o, /*use_shared_memory=*/false));
  // Transfers run while the warmers may still be reading the same pages.
  std::vector<std::vector<std::byte>> values;
  for (uint32_t i = 0; i < 8; ++i) {
    values.push_back(Pattern((uint64_t{1} << 20) + i, i + 1));
    PutOptions po;
    po.replica_count = 2;
    ASSERT_TRUE(client_->Put("warm/" + std::to_string(i), Bytes(values.back()), po).ok());
  }
  cluster_->WaitPagesWarm();
  for (size_t n = 0; n < cluster_->node_count(); ++n) {
    EXPECT_EQ(cluster_->node(n).warmed_bytes(), o.segment_size) << "node " << n;
  }
  for (uint32_t i = 0; i < 8; ++i) {
    auto got = client_->Get("warm/" + std::to_string(i));
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(*got, values[i]) << "key " << i;
  }
}

TEST_F(StoreWarmTest, NoWarmingWhenTurnedOff) {
  server::LocalClusterOptions o = SmallCluster(1, /*shared_memory=*/false);
  o.warm_pages = false;
  ASSERT_NO_FATAL_FAILURE(StartAndConnect(o, /*use_shared_memory=*/false));
  cluster_->WaitPagesWarm();  // returns at once: there is no warmer
  EXPECT_EQ(cluster_->node(0).warmed_bytes(), 0u);
  const std::vector<std::byte> v = Pattern(4096, 9);
  ASSERT_TRUE(client_->Put("cold/0", Bytes(v)).ok());
  auto got = client_->Get("cold/0");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, v);
}

}  // namespace
}  // namespace crescent::client_test
