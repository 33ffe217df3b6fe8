#include "transfer/frame_buffer.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

namespace crescent::transfer {
namespace {

constexpr size_t kStep = FrameBuffer::kStep;

// Fills `n` bytes of `c` through Room()/Filled(), as a socket read would.
void Read(FrameBuffer& b, size_t n, char c = 'x') {
  while (n > 0) {
    std::span<char> room = b.Room();
    ASSERT_GE(room.size(), kStep / 2);
    const size_t k = std::min(n, room.size());
    std::memset(room.data(), c, k);
    b.Filled(k);
    n -= k;
  }
}

TEST(FrameBufferTest, GrowsOnlyAsBytesArrive) {
  FrameBuffer b;
  Read(b, 24);  // a header, whatever body it claims
  b.Room();
  EXPECT_EQ(b.capacity(), kStep);
  for (size_t held = 24; held < (8u << 20); held += 100'000) {
    Read(b, 100'000);
    EXPECT_LE(b.capacity(), 2 * b.Pending().size() + kStep);
  }
}

TEST(FrameBufferTest, KeepsPendingBytesAcrossCompactionAndGrowth) {
  FrameBuffer b;
  std::string sent;
  for (int i = 0; i < 200; ++i) {
    const char c = static_cast<char>('a' + i % 26);
    Read(b, 1000 + 37 * i, c);
    sent.append(1000 + 37 * i, c);
    if (i % 3 == 0) {  // consume some, as frames are handled
      const size_t n = std::min<size_t>(b.Pending().size(), 1500);
      b.Consume(n);
      sent.erase(0, n);
    }
    ASSERT_EQ(b.Pending(), sent);
  }
}

TEST(FrameBufferTest, AnEmptyBufferGivesALargeFramesRoomBack) {
  FrameBuffer b;
  Read(b, 4 << 20);
  EXPECT_GE(b.capacity(), size_t{4} << 20);
  b.Consume(b.Pending().size());
  b.Room();
  EXPECT_EQ(b.capacity(), kStep);
}

}  // namespace
}  // namespace crescent::transfer
