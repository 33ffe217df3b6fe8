// EntrySlab: entries keep their addresses and contents as the slab grows
// past its first chunks (the hash set and key index read keys in place).
#include "master/entry_slab.h"

#include <gtest/gtest.h>

#include <vector>

namespace crescent::master {
namespace {

TEST(EntrySlabTest, EntriesNeverMoveAsTheSlabGrows) {
  EntrySlab slab;
  const size_t n = 3 * EntrySlab::kChunkEntries + 5;
  std::vector<const ObjectEntry*> at;
  for (size_t i = 0; i < n; ++i) {
    slab.EmplaceBack();
    EXPECT_EQ(slab[i].state, EntryState::kFree);
    slab[i].size = i;
    at.push_back(&slab[i]);
  }
  ASSERT_EQ(slab.size(), n);
  for (size_t i = 0; i < n; ++i) {
    ASSERT_EQ(&slab[i], at[i]) << i;
    ASSERT_EQ(slab[i].size, i) << i;
  }
  // Chunks are 2 MiB-aligned (a huge page backs only an aligned 2 MiB).
  EXPECT_EQ(reinterpret_cast<uintptr_t>(&slab[EntrySlab::kChunkEntries]) % EntrySlab::kChunkBytes,
            0u);
}

}  // namespace
}  // namespace crescent::master
