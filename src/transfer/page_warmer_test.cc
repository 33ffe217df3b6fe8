#include "transfer/page_warmer.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

namespace crescent::transfer {
namespace {

const uint64_t kPage = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));

// A memfd of `size` bytes, sized but with no page allocated, mapped shared
// without MAP_POPULATE: a page becomes resident only when something touches it.
class SparseMapping {
 public:
  explicit SparseMapping(uint64_t size) : size_(size) {
    fd_ = memfd_create("page-warmer-test", MFD_CLOEXEC);
    EXPECT_GE(fd_, 0);
    EXPECT_EQ(ftruncate(fd_, static_cast<off_t>(size)), 0);
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    EXPECT_NE(p, MAP_FAILED);
    // One fault, one page: no transparent huge page may make a touch of one
    // page resident a whole 2 MiB.
    (void)madvise(p, size, MADV_NOHUGEPAGE);
    data_ = static_cast<std::byte*>(p);
  }
  ~SparseMapping() {
    munmap(data_, size_);
    close(fd_);
  }
  std::byte* data() const { return data_; }
  // Pages of the mapping that are resident, by mincore().
  uint64_t ResidentPages() const {
    std::vector<unsigned char> v((size_ + kPage - 1) / kPage);
    EXPECT_EQ(mincore(data_, size_, v.data()), 0);
    uint64_t n = 0;
    for (unsigned char c : v) n += c & 1;
    return n;
  }
  uint64_t pages() const { return (size_ + kPage - 1) / kPage; }

 private:
  uint64_t size_;
  int fd_ = -1;
  std::byte* data_ = nullptr;
};

TEST(PageWarmerTest, TouchesEveryPageIncludingAPartialLastChunk) {
  // Three calls' worth of pages (1024 each) and three pages: the last is short.
  const uint64_t size = 3 * 1024 * kPage + 3 * kPage;
  SparseMapping m(size);
  ASSERT_EQ(m.ResidentPages(), 0u);
  PageWarmer w(m.data(), size);
  w.Wait();
  EXPECT_TRUE(w.done());
  EXPECT_EQ(w.warmed_bytes(), size);
  EXPECT_EQ(m.ResidentPages(), m.pages());
}

// User-mode warming (a same-host client's mapping) reads every page too.
TEST(PageWarmerTest, UserModeTouchesEveryPage) {
  const uint64_t size = 2 * 1024 * kPage + 5 * kPage;
  SparseMapping m(size);
  ASSERT_EQ(m.ResidentPages(), 0u);
  PageWarmer w(m.data(), size, PageWarmer::Access::kUser);
  w.Wait();
  EXPECT_TRUE(w.done());
  EXPECT_EQ(w.warmed_bytes(), size);
  EXPECT_EQ(m.ResidentPages(), m.pages());
}

TEST(PageWarmerTest, OnePageAndEmptyRanges) {
  SparseMapping m(kPage);
  {
    PageWarmer w(m.data(), kPage);
    w.Wait();
    EXPECT_EQ(w.warmed_bytes(), kPage);
  }
  EXPECT_EQ(m.ResidentPages(), 1u);
  PageWarmer empty(m.data(), 0);
  empty.Wait();
  EXPECT_TRUE(empty.done());
  EXPECT_EQ(empty.warmed_bytes(), 0u);
}

TEST(PageWarmerTest, NeverChangesAByteWhileWritersRun) {
  const uint64_t size = uint64_t{8} << 20;
  SparseMapping m(size);
  std::memset(m.data(), 0x5A, size);
  // A writer overwrites the second half, again and again, until the warmer has
  // been over all of it.
  PageWarmer w(m.data(), size);
  std::atomic<bool> warmed{false};
  std::thread writer([&] {
    do {
      std::memset(m.data() + size / 2, 0xC3, size / 2);
    } while (!warmed.load());
  });
  w.Wait();
  warmed = true;
  writer.join();
  EXPECT_TRUE(w.done());
  for (uint64_t i = 0; i < size; ++i) {
    const auto want = static_cast<std::byte>(i < size / 2 ? 0x5A : 0xC3);
    ASSERT_EQ(m.data()[i], want) << "byte " << i;
  }
}

TEST(PageWarmerTest, StopEndsTheWorkAndPublishesWhatWasTouched) {
  const uint64_t size = uint64_t{64} << 20;
  SparseMapping m(size);
  PageWarmer w(m.data(), size);
  w.Stop();  // returns however far the warmer got
  w.Wait();  // and so does Wait after it
  // Progress is published per call (1024 pages) or as the full size, and
  // nothing touches a page after Stop returned: what is resident is exactly
  // what the warmer reported.
  const uint64_t warmed = w.warmed_bytes();
  EXPECT_TRUE(warmed % (1024 * kPage) == 0 || warmed == size) << warmed;
  EXPECT_EQ(m.ResidentPages(), warmed / kPage);
  w.Stop();  // idempotent
  EXPECT_EQ(w.warmed_bytes(), warmed);
}

}  // namespace
}  // namespace crescent::transfer
