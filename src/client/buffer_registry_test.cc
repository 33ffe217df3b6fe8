// BufferRegistry: the zero-copy calls' guard. Ranges are accepted only when they
// lie wholly inside one registered region; regions never overlap.
#include "client/buffer_registry.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>
#include <vector>

namespace crescent::client {
namespace {

constexpr BufferAccess kRW = BufferAccess::kReadWrite;
constexpr BufferAccess kRead = BufferAccess::kReadOnly;

TEST(BufferRegistryTest, CheckAcceptsOnlyRangesInsideOneRegion) {
  std::vector<std::byte> mem(1000);
  std::byte* p = mem.data();
  BufferRegistry r;
  EXPECT_EQ(r.Check(p, 1, kRead).code(), ErrorCode::kBufferNotRegistered);
  ASSERT_TRUE(r.Register(p + 100, 100, kRW).ok());
  EXPECT_TRUE(r.Check(p + 100, 100, kRead).ok());
  EXPECT_TRUE(r.Check(p + 150, 50, kRead).ok());
  EXPECT_TRUE(r.Check(p + 199, 1, kRead).ok());
  EXPECT_TRUE(r.Check(p + 120, 0, kRead).ok());
  // A size that wraps the address space is malformed, not merely unregistered.
  EXPECT_EQ(r.Check(p + 150, SIZE_MAX, kRead).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(r.Check(p + 99, 2, kRead).code(), ErrorCode::kBufferNotRegistered);    // starts before
  EXPECT_EQ(r.Check(p + 150, 51, kRead).code(), ErrorCode::kBufferNotRegistered);  // runs past end
  EXPECT_EQ(r.Check(p + 200, 1, kRead).code(), ErrorCode::kBufferNotRegistered);   // just after
  EXPECT_EQ(r.Check(nullptr, 1, kRead).code(), ErrorCode::kInvalidArgument);
}

// Two adjacent regions are two regions: a range spanning both is refused,
// because a transfer must stay within what one registration vouched for.
TEST(BufferRegistryTest, RangeSpanningTwoAdjacentRegionsIsRefused) {
  std::vector<std::byte> mem(256);
  BufferRegistry r;
  ASSERT_TRUE(r.Register(mem.data(), 128, kRW).ok());
  ASSERT_TRUE(r.Register(mem.data() + 128, 128, kRW).ok());
  EXPECT_TRUE(r.Check(mem.data() + 100, 28, kRead).ok());
  EXPECT_TRUE(r.Check(mem.data() + 128, 28, kRead).ok());
  EXPECT_EQ(r.Check(mem.data() + 100, 56, kRead).code(), ErrorCode::kBufferNotRegistered);
}

TEST(BufferRegistryTest, OverlapsAreRefusedInEveryPosition) {
  std::vector<std::byte> mem(1000);
  std::byte* p = mem.data();
  BufferRegistry r;
  ASSERT_TRUE(r.Register(p + 100, 100, kRW).ok());
  EXPECT_EQ(r.Register(p + 100, 100, kRW).code(), ErrorCode::kInvalidArgument);  // same
  EXPECT_EQ(r.Register(p + 50, 51, kRW).code(), ErrorCode::kInvalidArgument);    // tail overlaps
  EXPECT_EQ(r.Register(p + 199, 10, kRW).code(), ErrorCode::kInvalidArgument);   // head overlaps
  EXPECT_EQ(r.Register(p + 120, 10, kRW).code(), ErrorCode::kInvalidArgument);   // inside
  EXPECT_EQ(r.Register(p, 500, kRW).code(), ErrorCode::kInvalidArgument);        // covers
  EXPECT_TRUE(r.Register(p + 50, 50, kRW).ok());                                 // touches before
  EXPECT_TRUE(r.Register(p + 200, 50, kRW).ok());                                // touches after
}

TEST(BufferRegistryTest, RegisterRejectsNullAndEmpty) {
  std::vector<std::byte> mem(8);
  BufferRegistry r;
  EXPECT_EQ(r.Register(nullptr, 8, kRW).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(r.Register(mem.data(), 0, kRW).code(), ErrorCode::kInvalidArgument);
}

TEST(BufferRegistryTest, UnregisterByStartAddressOnly) {
  std::vector<std::byte> mem(100);
  BufferRegistry r;
  ASSERT_TRUE(r.Register(mem.data(), 100, kRW).ok());
  EXPECT_EQ(r.Unregister(mem.data() + 1).code(), ErrorCode::kBufferNotRegistered);
  EXPECT_TRUE(r.Check(mem.data(), 100, kRead).ok());
  EXPECT_TRUE(r.Unregister(mem.data()).ok());
  EXPECT_EQ(r.Check(mem.data(), 100, kRead).code(), ErrorCode::kBufferNotRegistered);
  EXPECT_EQ(r.Unregister(mem.data()).code(), ErrorCode::kBufferNotRegistered);
  // The space is free again.
  EXPECT_TRUE(r.Register(mem.data() + 10, 20, kRW).ok());
}

// Memory the kernel maps read-only (a PROT_READ mapping, as numpy's read-only
// memmap) is a put's source at most: registering it for gets is refused, and
// a get into it is refused too, instead of faulting (shared memory) or failing
// as UNAVAILABLE (EFAULT from recv over TCP).
TEST(BufferRegistryTest, ReadOnlyMemoryIsNeverADestination) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* ro = mmap(nullptr, 2 * page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(ro, MAP_FAILED);
  BufferRegistry r;
  Status refused = r.Register(ro, 2 * page, kRW);
  EXPECT_EQ(refused.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(refused.message().find("read-only"), std::string::npos) << refused.message();
  ASSERT_TRUE(r.Register(ro, 2 * page, kRead).ok());
  EXPECT_TRUE(r.Check(ro, page, kRead).ok());
  Status write = r.Check(ro, page, kRW);
  EXPECT_EQ(write.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(write.message().find("read-only"), std::string::npos) << write.message();
  munmap(ro, 2 * page);
}

// Writable memory may be registered either way; registered read-only (the
// caller's word that it must not be written), it is no destination either.
TEST(BufferRegistryTest, WritableMemoryRegisteredReadOnlyIsNoDestination) {
  std::vector<std::byte> mem(64);
  BufferRegistry r;
  ASSERT_TRUE(r.Register(mem.data(), mem.size(), kRead).ok());
  EXPECT_TRUE(r.Check(mem.data(), 8, kRead).ok());
  EXPECT_EQ(r.Check(mem.data(), 8, kRW).code(), ErrorCode::kInvalidArgument);
}

// Unmapped and unreadable memory is refused at registration, in every part of
// the range: a range that starts mapped and runs into a hole is refused too.
TEST(BufferRegistryTest, UnmappedOrUnreadableMemoryIsRefused) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  auto* mem = static_cast<std::byte*>(
      mmap(nullptr, 3 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(static_cast<void*>(mem), MAP_FAILED);
  ASSERT_EQ(munmap(mem + 2 * page, page), 0);           // a hole after two pages
  ASSERT_EQ(mprotect(mem + page, page, PROT_NONE), 0);  // an unreadable page
  BufferRegistry r;
  EXPECT_EQ(r.Register(mem, 2 * page, kRead).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(r.Register(mem + 2 * page, page, kRead).code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(r.Register(mem, page, kRW).ok());
  munmap(mem, 2 * page);
}

// The threads of this process, as the kernel lists them.
size_t ThreadCount() {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/task")) ++n;
  return n;
}

// The thread count once it is `expected`, or after 50 ms. A joined thread may
// still be listed for a moment: its exit wakes the joiner before the kernel
// removes it from /proc/self/task. 50 ms is far less than warming 1 GiB takes
// (a fault per page), so a warmer left running would still show.
size_t ThreadCountSettled(size_t expected) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
  size_t n = ThreadCount();
  while (n != expected && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    n = ThreadCount();
  }
  return n;
}

std::byte* MapAnonymous(size_t size) {
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : static_cast<std::byte*>(p);
}

// Warming reads every page of the region once and writes nothing: the bytes
// are as they were, and the registry counts the whole region warmed.
TEST(BufferRegistryTest, WarmingReadsEveryPageAndChangesNoByte) {
  const size_t size = (8u << 20) + 123;  // not a whole number of pages
  std::vector<std::byte> mem(size);
  for (size_t i = 0; i < size; ++i) mem[i] = std::byte(i * 131 + 7);
  const std::vector<std::byte> before = mem;
  BufferRegistry r(/*warm=*/true);
  ASSERT_TRUE(r.Register(mem.data(), size, kRW).ok());
  r.WaitWarm();
  EXPECT_EQ(r.warmed_bytes(), size);
  EXPECT_EQ(std::memcmp(mem.data(), before.data(), size), 0);
  // Calls go on as before.
  EXPECT_TRUE(r.Check(mem.data() + 10, 100, kRW).ok());
}

TEST(BufferRegistryTest, WithoutWarmingNothingIsRead) {
  std::vector<std::byte> mem(1u << 20);
  BufferRegistry r;
  ASSERT_TRUE(r.Register(mem.data(), mem.size(), kRW).ok());
  r.WaitWarm();  // returns at once
  EXPECT_EQ(r.warmed_bytes(), 0u);
}

// Unregister returns only once the region's warmer has stopped, so that the
// caller may unmap the memory at once: the warmer's thread is gone by then,
// even for a region far too large to have been warmed in the meantime.
TEST(BufferRegistryTest, UnregisterStopsTheWarmerBeforeReturning) {
  const size_t size = size_t{1} << 30;  // untouched: reads map the zero page, nothing is committed
  std::byte* mem = MapAnonymous(size);
  ASSERT_NE(mem, nullptr);
  const size_t threads = ThreadCount();
  BufferRegistry r(/*warm=*/true);
  ASSERT_TRUE(r.Register(mem, size, kRW).ok());
  ASSERT_TRUE(r.Unregister(mem).ok());
  EXPECT_EQ(ThreadCountSettled(threads), threads);
  EXPECT_EQ(r.warmed_bytes(), 0u);  // no region left to count
  ASSERT_EQ(munmap(mem, size), 0);
  // A registry destroyed with regions still registered stops their warmers too.
  std::byte* again = MapAnonymous(size);
  ASSERT_NE(again, nullptr);
  {
    BufferRegistry r2(/*warm=*/true);
    ASSERT_TRUE(r2.Register(again, size, kRW).ok());
  }
  EXPECT_EQ(ThreadCountSettled(threads), threads);
  munmap(again, size);
}

// A mapping of a file is registered but not warmed (a read of every page would
// fetch the file from its device); memory beside it still is.
TEST(BufferRegistryTest, FileMappingsAreNotWarmed) {
  char path[] = "/tmp/crescent-buffer-registry-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  unlink(path);
  const size_t size = 1u << 20;
  ASSERT_EQ(ftruncate(fd, static_cast<off_t>(size)), 0);
  void* file = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  ASSERT_NE(file, MAP_FAILED);
  std::vector<std::byte> heap(size);
  BufferRegistry r(/*warm=*/true);
  ASSERT_TRUE(r.Register(file, size, kRW).ok());
  r.WaitWarm();
  EXPECT_EQ(r.warmed_bytes(), 0u);
  ASSERT_TRUE(r.Register(heap.data(), size, kRW).ok());
  r.WaitWarm();
  EXPECT_EQ(r.warmed_bytes(), size);
  ASSERT_TRUE(r.Unregister(file).ok());
  munmap(file, size);
}

}  // namespace
}  // namespace crescent::client
