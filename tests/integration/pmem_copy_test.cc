// A copy of a persistent file (docs/persistent-tier.md, "Warm restart"): it has
// its original's header, so the same segment name, but not its file identity.
// A node started with the copy while the original's node runs is refused, with
// a message that says why, and the original keeps its segment and objects.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <string>
#include <vector>

#include "integration/cluster.h"

namespace crescent::itest {
namespace {

namespace fs = std::filesystem;

class PmemCopyTest : public WithCluster<testing::Test> {
 protected:
  TempDir tmp_;
};

TEST_F(PmemCopyTest, ACopiedFileDoesNotTakeOverALiveNodesSegment) {
  constexpr size_t kValue = 64 << 10;
  constexpr int kObjects = 8;
  ASSERT_NO_FATAL_FAILURE(StartCluster({.stores = 0, .segment_size = "4MiB"}));
  const std::string a = tmp_.File("a.seg");
  const std::string b = tmp_.File("b.seg");
  ASSERT_TRUE(cluster_->AddStore({"--pmem", a + ":16MiB", "--node-id", "nodeA"}));
  client_ = cluster_->Connect(false);
  ASSERT_NE(client_, nullptr);
  ASSERT_TRUE(cluster_->WaitForSegments(*client_, 2, kStartTimeout));
  StatusOr<ClusterStat> st = client_->Stat();
  ASSERT_TRUE(st.ok());
  std::string pmem;
  for (const SegmentUsage& s : st->segments) {
    if (s.tier == "pmem") pmem = s.name;
  }
  ASSERT_FALSE(pmem.empty());
  PutOptions o;
  o.preferred_segment = pmem;
  for (int i = 0; i < kObjects; ++i) {
    ASSERT_TRUE(client_->Put("k/" + std::to_string(i), RandomBytes(kValue, i), o).ok());
  }

  fs::copy_file(a, b);
  testing::AssertionResult copy =
      cluster_->AddStore({"--pmem", b + ":16MiB", "--node-id", "nodeB"});
  if (copy) {
    // Refused nowhere: let the copy's node go, as the issue saw it do.
    cluster_->store(1).proc->Kill(SIGKILL);
    (void)cluster_->store(1).proc->Wait(kExitTimeout);
  }
  EXPECT_FALSE(copy) << "a node started with a copy of a live node's file";
  EXPECT_NE(std::string(copy.message()).find("is a copy of it"), std::string::npos)
      << copy.message();

  st = client_->Stat();
  ASSERT_TRUE(st.ok());
  bool owned_by_a = false;
  for (const SegmentUsage& s : st->segments) {
    if (s.name == pmem) owned_by_a = s.owner_node == "nodeA";
  }
  EXPECT_TRUE(owned_by_a) << "nodeA lost its persistent segment";
  for (int i = 0; i < kObjects; ++i) {
    StatusOr<std::vector<std::byte>> got = client_->Get("k/" + std::to_string(i));
    ASSERT_TRUE(got.ok()) << "k/" << i << ": " << got.status().ToString();
    EXPECT_EQ(*got, RandomBytes(kValue, i));
  }
}

}  // namespace
}  // namespace crescent::itest
