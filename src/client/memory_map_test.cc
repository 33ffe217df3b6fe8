// MappingOf: what the kernel lets this process do with a range, every byte of
// it, across as many mappings as the range spans.
#include "client/memory_map.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace crescent::client {
namespace {

const size_t kPage = static_cast<size_t>(sysconf(_SC_PAGESIZE));

std::byte* MapPages(size_t pages, int prot) {
  void* p = mmap(nullptr, pages * kPage, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : static_cast<std::byte*>(p);
}

TEST(MemoryMapTest, HeapMemoryIsReadWrite) {
  std::vector<std::byte> mem(100);
  EXPECT_EQ(MappingOf(mem.data(), mem.size()), Mapping::kReadWrite);
}

TEST(MemoryMapTest, ReadOnlyAnywhereInTheRangeMakesItReadOnly) {
  std::byte* mem = MapPages(3, PROT_READ | PROT_WRITE);
  ASSERT_NE(mem, nullptr);
  ASSERT_EQ(mprotect(mem + 2 * kPage, kPage, PROT_READ), 0);
  EXPECT_EQ(MappingOf(mem, 2 * kPage), Mapping::kReadWrite);
  EXPECT_EQ(MappingOf(mem + kPage, 2 * kPage), Mapping::kReadOnly);  // spans two mappings
  EXPECT_EQ(MappingOf(mem + 2 * kPage + 5, 1), Mapping::kReadOnly);
  munmap(mem, 3 * kPage);
}

TEST(MemoryMapTest, HolesAndUnreadablePagesAreUnmapped) {
  std::byte* mem = MapPages(3, PROT_READ | PROT_WRITE);
  ASSERT_NE(mem, nullptr);
  ASSERT_EQ(munmap(mem + 2 * kPage, kPage), 0);           // a hole after two pages
  ASSERT_EQ(mprotect(mem + kPage, kPage, PROT_NONE), 0);  // an unreadable page
  EXPECT_EQ(MappingOf(mem, kPage), Mapping::kReadWrite);
  EXPECT_EQ(MappingOf(mem, kPage + 1), Mapping::kUnmapped);  // runs into PROT_NONE
  EXPECT_EQ(MappingOf(mem + 2 * kPage, 1), Mapping::kUnmapped);
  munmap(mem, 2 * kPage);
}

TEST(MemoryMapTest, MalformedRangesAreUnmapped) {
  std::vector<std::byte> mem(8);
  EXPECT_EQ(MappingOf(nullptr, 1), Mapping::kUnmapped);
  EXPECT_EQ(MappingOf(mem.data(), 0), Mapping::kUnmapped);
  EXPECT_EQ(MappingOf(mem.data(), SIZE_MAX), Mapping::kUnmapped);  // wraps around
}

// Memory (anonymous, the heap, a memfd) is told from a mapping of a file, and
// a range counts as a file when any part of it maps one.
TEST(MemoryMapTest, FilesAreToldFromMemory) {
  bool file = true;
  std::vector<std::byte> heap(100);
  EXPECT_EQ(MappingOf(heap.data(), heap.size(), &file), Mapping::kReadWrite);
  EXPECT_FALSE(file);
  std::byte* anon = MapPages(2, PROT_READ | PROT_WRITE);
  ASSERT_NE(anon, nullptr);
  file = true;
  EXPECT_EQ(MappingOf(anon, 2 * kPage, &file), Mapping::kReadWrite);
  EXPECT_FALSE(file);
  const int mfd = memfd_create("crescent-memory-map-test", MFD_CLOEXEC);
  ASSERT_GE(mfd, 0);
  ASSERT_EQ(ftruncate(mfd, static_cast<off_t>(kPage)), 0);
  void* shm = mmap(nullptr, kPage, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
  close(mfd);
  ASSERT_NE(shm, MAP_FAILED);
  file = true;
  EXPECT_EQ(MappingOf(shm, kPage, &file), Mapping::kReadWrite);
  EXPECT_FALSE(file);

  char path[] = "/tmp/crescent-memory-map-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  unlink(path);
  ASSERT_EQ(ftruncate(fd, static_cast<off_t>(2 * kPage)), 0);
  // The file's first page right after the anonymous pages, so that one range
  // spans both.
  void* at = mmap(anon + kPage, kPage, PROT_READ, MAP_SHARED | MAP_FIXED, fd, 0);
  close(fd);
  ASSERT_EQ(at, static_cast<void*>(anon + kPage));
  file = false;
  EXPECT_EQ(MappingOf(anon, kPage, &file), Mapping::kReadWrite);
  EXPECT_FALSE(file);
  EXPECT_EQ(MappingOf(anon, 2 * kPage, &file), Mapping::kReadOnly);
  EXPECT_TRUE(file);
  // Unmapped ranges say nothing of files.
  file = true;
  EXPECT_EQ(MappingOf(nullptr, 1, &file), Mapping::kUnmapped);
  EXPECT_FALSE(file);
  munmap(anon, 2 * kPage);
  munmap(shm, kPage);
}

}  // namespace
}  // namespace crescent::client
