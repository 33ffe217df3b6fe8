#include "sim/page_key.h"

#include <gtest/gtest.h>

#include "common/hash.h"

namespace crescent::sim {
namespace {

TEST(PageKey, NamesAPageAsReplayWritesIt) {
  EXPECT_EQ(PageKey("a", 42), "a-42");
  EXPECT_EQ(PageKey(kDefaultKeyPrefix, 7), "replay-7");
}

TEST(PageKey, HistoryIsTheHashTheMasterGivesTheKey) {
  EXPECT_EQ(PageHistory("replay", 7), HashKey("replay-7"));
  EXPECT_NE(PageHistory("replay", 7), PageHistory("other", 7));
}

TEST(PageKey, HistoriesFollowTheDenseBlockIds) {
  auto trace = ParseTrace("{\"hash_ids\": [90, 5]}\n{\"hash_ids\": [5, 12]}\n", "test");
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  const std::vector<uint64_t> histories = PageHistories(*trace);
  ASSERT_EQ(histories.size(), 3u);
  EXPECT_EQ(histories[0], HashKey("replay-90"));
  EXPECT_EQ(histories[1], HashKey("replay-5"));
  EXPECT_EQ(histories[2], HashKey("replay-12"));
}

}  // namespace
}  // namespace crescent::sim
