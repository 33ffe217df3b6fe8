// KeyBlockArena: blocks are distinct and usable, an entry frees either kind,
// and a chunk goes back (and is reused) once its last block and its cursor
// are gone.
#include "master/key_block_arena.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace crescent::master {
namespace {

using Block = std::unique_ptr<char[], BlockDelete>;

TEST(KeyBlockArenaTest, BlocksAreDistinctAndKeepTheirBytes) {
  KeyBlockArena::Cursor cursor;
  std::vector<Block> blocks;
  // Enough to fill several chunks.
  for (int i = 0; i < 30000; ++i) {
    const std::string key = "key-" + std::to_string(i) + std::string(i % 23, 'x');
    char* p = cursor.Allocate(key.size());
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 8, 0u);
    EXPECT_TRUE(KeyBlockArena::Owns(p));
    std::memcpy(p, key.data(), key.size());
    blocks.emplace_back(p);
  }
  for (int i = 0; i < 30000; ++i) {
    const std::string key = "key-" + std::to_string(i) + std::string(i % 23, 'x');
    ASSERT_EQ(std::string(blocks[i].get(), key.size()), key) << i;
  }
}

TEST(KeyBlockArenaTest, LargeBlocksAreNotTheArenas) {
  KeyBlockArena::Cursor cursor;
  EXPECT_EQ(cursor.Allocate(KeyBlockArena::kChunkBytes), nullptr);
  EXPECT_EQ(cursor.Allocate(0), nullptr);
  Block heap(new char[16]);  // the deleter frees new[] blocks too
  EXPECT_FALSE(KeyBlockArena::Owns(heap.get()));
}

TEST(KeyBlockArenaTest, AChunkGoesBackWithItsLastBlockAndIsReused) {
  KeyBlockArena& arena = KeyBlockArena::Instance();
  const size_t before = arena.chunks_in_use();
  std::vector<Block> blocks;
  char* first = nullptr;
  {
    KeyBlockArena::Cursor cursor;
    for (int i = 0; i < 100; ++i) {
      blocks.emplace_back(cursor.Allocate(64));
      ASSERT_NE(blocks.back(), nullptr);
    }
    first = blocks.front().get();
    EXPECT_EQ(arena.chunks_in_use(), before + 1);
  }
  // The cursor is gone; the blocks still hold the chunk.
  EXPECT_EQ(arena.chunks_in_use(), before + 1);
  blocks.pop_back();
  EXPECT_EQ(arena.chunks_in_use(), before + 1);
  blocks.clear();
  EXPECT_EQ(arena.chunks_in_use(), before);
  // The emptied chunk is the next one handed out, from its start, zeroed.
  KeyBlockArena::Cursor again;
  char* p = again.Allocate(64);
  EXPECT_EQ(p, first);
  EXPECT_EQ(p[0], 0);
  Block hold(p);
}

}  // namespace
}  // namespace crescent::master
