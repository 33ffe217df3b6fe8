#include "transfer/page_warmer.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/fd.h"
#include "common/tsan.h"

namespace crescent::transfer {
namespace {

constexpr size_t kPagesPerCall = 1024;  // IOV_MAX on Linux; 1 KiB in the pipe per call

// Has the kernel read the first byte of each page in [p, p + n) (at most
// kPagesPerCall pages): one writev into `pipe_w`, then the bytes are drained
// from `pipe_r`. False when the pipe failed.
bool KernelReadPages(const std::byte* p, uint64_t n, uint64_t page, int pipe_r, int pipe_w) {
  std::array<iovec, kPagesPerCall> iov;
  size_t count = 0;
  for (uint64_t off = 0; off < n; off += page) {
    iov[count++] = {const_cast<std::byte*>(p + off), 1};
  }
  // The data servers and clients write these bytes meanwhile; the copies into
  // the pipe are thrown away, so TSan need not see them.
  ssize_t wrote;
  TsanIgnoreBegin();
  do {
    wrote = writev(pipe_w, iov.data(), static_cast<int>(count));
  } while (wrote < 0 && errno == EINTR);
  TsanIgnoreEnd();
  if (wrote < 0) return false;
  std::array<char, kPagesPerCall> sink;
  for (ssize_t left = wrote; left > 0;) {
    ssize_t got = read(pipe_r, sink.data(), static_cast<size_t>(left));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    left -= got;
  }
  return wrote == static_cast<ssize_t>(count);
}

// Reads the first byte of each page in [p, p + n) from user mode.
void UserReadPages(const std::byte* p, uint64_t n, uint64_t page) {
  // Writers may change these bytes meanwhile; the values are thrown away.
  TsanIgnoreBegin();
  unsigned char sum = 0;
  for (uint64_t off = 0; off < n; off += page) {
    sum += *reinterpret_cast<const volatile unsigned char*>(p + off);
  }
  TsanIgnoreEnd();
  asm volatile("" : : "r"(sum));
}

}  // namespace

PageWarmer::PageWarmer(const std::byte* data, uint64_t size, Access access, const char* what)
    : data_(data), size_(size), access_(access), what_(what) {
  thread_ = std::thread([this] { Run(); });
}

PageWarmer::~PageWarmer() { Stop(); }

void PageWarmer::Stop() {
  RequestStop();
  if (thread_.joinable()) thread_.join();
}

void PageWarmer::Wait() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [this] { return finished_; });
}

void PageWarmer::Run() {
  // Lowest priority for this thread only (Linux applies a thread id's nice
  // value to that thread): transfers and heartbeats go first. Failing to lower
  // it only makes the warmer compete; it is not an error.
  (void)setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), 19);
  const long sys_page = sysconf(_SC_PAGESIZE);
  const uint64_t page = sys_page > 0 ? static_cast<uint64_t>(sys_page) : 4096;
  const uint64_t step = page * kPagesPerCall;
  int fds[2] = {-1, -1};
  if (access_ == Access::kUser) {
    for (uint64_t off = 0; off < size_ && !stop_.load(std::memory_order_relaxed);) {
      const uint64_t n = std::min(step, size_ - off);
      UserReadPages(data_ + off, n, page);
      off += n;
      warmed_.store(off, std::memory_order_release);
    }
  } else if (pipe2(fds, O_CLOEXEC) != 0) {
    std::fprintf(stderr, "crescent: %s pages not warmed (pipe: %s)\n", what_, std::strerror(errno));
  } else {
    const ScopedFd read_end(fds[0]), write_end(fds[1]);
    uint64_t off = 0;
    while (off < size_ && !stop_.load(std::memory_order_relaxed)) {
      const uint64_t n = std::min(step, size_ - off);
      if (!KernelReadPages(data_ + off, n, page, read_end.get(), write_end.get())) {
        std::fprintf(stderr, "crescent: %s page warming stopped at %llu of %llu bytes (%s)\n",
                     what_, static_cast<unsigned long long>(off),
                     static_cast<unsigned long long>(size_), std::strerror(errno));
        break;
      }
      off += n;
      warmed_.store(off, std::memory_order_release);
    }
  }
  std::lock_guard lock(mu_);
  finished_ = true;
  cv_.notify_all();
}

}  // namespace crescent::transfer
