// Client namespace and cluster verbs: List, RemoveByPrefix, RemoveAll,
// GetSize and Stat agree with what was put.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "client/client_test_util.h"

namespace crescent {
namespace {

using client_test::Bytes;
using client_test::ClientClusterTest;
using client_test::Pattern;
using client_test::SmallCluster;

class ClientNamespaceTest : public ClientClusterTest {
 protected:
  server::LocalClusterOptions Options() override { return SmallCluster(2, GetParam()); }

  void PutKeys() {
    for (const char* k : {"a/1", "a/2", "a/3", "b/1", "c"}) {
      ASSERT_TRUE(client_->Put(k, Bytes(Pattern(1000, 51))).ok()) << k;
    }
  }
};

TEST_P(ClientNamespaceTest, StatCountsSegmentsObjectsAndBytes) {
  StatusOr<ClusterStat> st = client_->Stat();
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  ASSERT_EQ(st->segments.size(), 2u);
  EXPECT_EQ(st->objects, 0u);
  EXPECT_EQ(st->capacity_bytes, 2 * (uint64_t{16} << 20));
  // The largest value a put is accepted for: one segment's capacity.
  EXPECT_EQ(st->largest_object, uint64_t{16} << 20);
  EXPECT_TRUE(client_->Put("too-big", Bytes(Pattern((16 << 20) + 1, 1))).code() ==
              ErrorCode::kInvalidSize);
  for (const SegmentUsage& seg : st->segments) {
    EXPECT_EQ(seg.capacity, uint64_t{16} << 20);
    EXPECT_FALSE(seg.endpoint.empty());
    EXPECT_TRUE(seg.owner_node == "node-0" || seg.owner_node == "node-1") << seg.owner_node;
    EXPECT_EQ(seg.used, 0u);
  }
  PutKeys();
  st = client_->Stat();
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->objects, 5u);
  EXPECT_EQ(st->pending_puts, 0u);
  EXPECT_GE(st->used_bytes, 5000u);
  uint64_t per_segment = 0;
  for (const SegmentUsage& seg : st->segments) per_segment += seg.used;
  EXPECT_EQ(per_segment, st->used_bytes);
  EXPECT_FALSE(st->counters.empty());
}

TEST_P(ClientNamespaceTest, ListByPrefixWithLimit) {
  PutKeys();
  StatusOr<std::vector<std::string>> all = client_->List("");
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  std::vector<std::string> sorted = *all;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, (std::vector<std::string>{"a/1", "a/2", "a/3", "b/1", "c"}));
  StatusOr<std::vector<std::string>> a = client_->List("a/");
  ASSERT_TRUE(a.ok());
  sorted = *a;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, (std::vector<std::string>{"a/1", "a/2", "a/3"}));
  bool truncated = false;
  StatusOr<std::vector<std::string>> limited = client_->List("a/", 2, &truncated);
  ASSERT_TRUE(limited.ok());
  EXPECT_EQ(*limited, (std::vector<std::string>{"a/1", "a/2"}));
  EXPECT_TRUE(truncated);
  // The next page: the keys after the last one listed.
  limited = client_->List("a/", 2, &truncated, limited->back());
  ASSERT_TRUE(limited.ok());
  EXPECT_EQ(*limited, std::vector<std::string>{"a/3"});
  EXPECT_FALSE(truncated);
  EXPECT_TRUE(client_->List("zzz")->empty());
}

// An empty prefix matches every key: the library refuses it, as the CLI does,
// and removing everything takes RemoveAll.
TEST_P(ClientNamespaceTest, RemoveByPrefixRefusesAnEmptyPrefix) {
  PutKeys();
  StatusOr<size_t> n = client_->RemoveByPrefix("");
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(n.status().message(),
            "an empty prefix would remove every key; to do that, call RemoveAll");
  n = client_->RemoveByPrefix("", /*force=*/true);
  EXPECT_EQ(n.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(client_->List("")->size(), 5u);
}

TEST_P(ClientNamespaceTest, RemoveByPrefixAndRemoveAll) {
  PutKeys();
  StatusOr<size_t> n = client_->RemoveByPrefix("a/");
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, 3u);
  EXPECT_FALSE(*client_->Exists("a/2"));
  EXPECT_TRUE(*client_->Exists("b/1"));

  // A leased object is skipped unless forced.
  ASSERT_TRUE(client_->Get("c").ok());
  n = client_->RemoveAll();
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 1u);  // b/1 only
  EXPECT_TRUE(*client_->Exists("c"));
  n = client_->RemoveAll(/*force=*/true);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 1u);

  StatusOr<ClusterStat> st = client_->Stat();
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->objects, 0u);
  // "c" was read: its space stays held until its lease ends, so no put can
  // take it while a reader may still copy it. Nothing else is left.
  EXPECT_EQ(st->used_bytes, 1024u);  // one 1000-byte replica, 64-byte aligned
  EXPECT_EQ(st->held_bytes, 1024u);
  EXPECT_TRUE(client_->List("")->empty());
}

TEST_P(ClientNamespaceTest, GetSize) {
  ASSERT_TRUE(client_->Put("sized", Bytes(Pattern(12345, 52))).ok());
  StatusOr<uint64_t> n = client_->GetSize("sized");
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 12345u);
}

INSTANTIATE_TEST_SUITE_P(Transports, ClientNamespaceTest, ::testing::Bool(),
                         client_test::TransportName);

}  // namespace
}  // namespace crescent
