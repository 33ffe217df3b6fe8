// SplitBatch (batch_parts.h): every key in exactly one part, in order, each
// part within the key count and the reply bound the master checks.
#include "rpc/batch_parts.h"

#include <gtest/gtest.h>

#include "rpc/server_validation.h"

namespace crescent::rpc {
namespace {

std::vector<std::string> Keys(size_t n, size_t bytes) {
  std::vector<std::string> keys;
  for (size_t i = 0; i < n; ++i)
    keys.push_back(std::string(bytes, static_cast<char>('a' + i % 26)));
  return keys;
}

// Parts as (begin, end) pairs, for comparisons.
std::vector<std::pair<size_t, size_t>> Ranges(const std::vector<KeyRange>& parts) {
  std::vector<std::pair<size_t, size_t>> out;
  for (const KeyRange& p : parts) out.emplace_back(p.begin, p.end);
  return out;
}

TEST(BatchPartsTest, NoKeysNoParts) { EXPECT_TRUE(SplitBatch({}, 4096, 64 << 20, 0).empty()); }

TEST(BatchPartsTest, ShortKeysAreSplitByCount) {
  const std::vector<std::string> keys = Keys(10, 8);
  EXPECT_EQ(Ranges(SplitBatch(keys, 4, 64 << 20, 16)),
            (std::vector<std::pair<size_t, size_t>>{{0, 4}, {4, 8}, {8, 10}}));
  EXPECT_EQ(Ranges(SplitBatch(keys, 0, 64 << 20, 0)).size(), 10u) << "at least one key a part";
}

TEST(BatchPartsTest, LongKeysAreSplitByBytes) {
  // Three results of 1000-byte keys fit, a fourth does not.
  const uint64_t one = ResultReplyBound(1000, 0, kAssumedEndpointBytes);
  const uint64_t limit = kReplyHeadroomBytes + 3 * one + one / 2;
  EXPECT_EQ(Ranges(SplitBatch(Keys(7, 1000), 4096, limit, 0)),
            (std::vector<std::pair<size_t, size_t>>{{0, 3}, {3, 6}, {6, 7}}));
  // Replicas count as well: with one each, fewer keys fit.
  EXPECT_LT(SplitBatch(Keys(7, 1000), 4096, limit, 1)[0].size(), 3u);
  // A key too large for any part on its own is a part of its own.
  EXPECT_EQ(Ranges(SplitBatch(Keys(2, 1 << 20), 4096, limit, 0)),
            (std::vector<std::pair<size_t, size_t>>{{0, 1}, {1, 2}}));
}

// The case: 1100 keys of 64 KiB, over the 64 MiB limit in one request.
// Every part passes the master's own check for replica lists (16 replicas of
// 256-byte endpoints), and the parts cover the keys in order.
TEST(BatchPartsTest, EveryPartPassesTheMastersReplyCheck) {
  constexpr uint64_t kLimit = 64 << 20;
  const std::vector<std::string> keys = Keys(1100, 65535);
  const std::vector<KeyRange> parts = SplitBatch(keys, 4096, kLimit, kDefaultMaxReplicas);
  ASSERT_GE(parts.size(), 2u);
  size_t next = 0;
  for (const KeyRange& p : parts) {
    ASSERT_EQ(p.begin, next);
    ASSERT_GT(p.size(), 0u);
    next = p.end;
    google::protobuf::RepeatedPtrField<std::string> part(keys.begin() + p.begin,
                                                         keys.begin() + p.end);
    const uint64_t bound = BatchReplyBound(part, kDefaultMaxReplicas, kAssumedEndpointBytes);
    EXPECT_TRUE(CheckReplyFits("BatchGetReplicaList", part.size(), bound, kLimit).ok());
  }
  EXPECT_EQ(next, keys.size());
}

}  // namespace
}  // namespace crescent::rpc
