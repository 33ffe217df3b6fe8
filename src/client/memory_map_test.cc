// MappingOf: what the kernel lets this process do with a range, every byte of
// it, across as many mappings as the range spans.
#include "client/memory_map.h"

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

}  // namespace
}  // namespace crescent::client
