// PageWarmer: has the kernel read one byte of every page of a mapping, once,
// on a background thread at the lowest CPU priority, so that the first
// transfers into a fresh segment run at the speed of later ones.
//
// Why: MAP_POPULATE (and MADV_POPULATE_WRITE) fill the page tables, but on a
// VM whose hypervisor shadows them (this project's CI machines), the first
// access to each page still traps, and accesses from user mode and from the
// kernel pay that separately. The TCP data server moves payloads with recv and
// send, so its accesses are the kernel's. Measured on a fresh memfd: recv into
// it 2.5-2.9 ms per MiB on first access against 0.2 ms after; touching the
// pages from user mode first did not help; a kernel read of one byte per page
// did (0.18-0.22 ms per MiB). The warmer makes those kernel reads with writev
// of one byte per page into a pipe, 1024 pages per call, and drains the pipe.
// On bare metal the pass costs tens of milliseconds per GiB.
//
// The warmer only reads, so it never changes a stored byte, and transfers may
// run while it works. Stop() or destruction ends it between calls.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>

namespace crescent::transfer {

class PageWarmer {
 public:
  // Starts warming [data, data + size). Both must stay mapped until the
  // warmer is stopped or destroyed.
  PageWarmer(const std::byte* data, uint64_t size);
  ~PageWarmer();
  PageWarmer(const PageWarmer&) = delete;
  PageWarmer& operator=(const PageWarmer&) = delete;

  uint64_t size() const { return size_; }
  // Bytes whose pages have been read so far (size() once done).
  uint64_t warmed_bytes() const { return warmed_.load(std::memory_order_acquire); }
  bool done() const { return warmed_bytes() == size_; }
  // Blocks until every page was read, or the warmer stopped (Stop(), or no
  // pipe could be made: then done() stays false).
  void Wait();
  // Asks the thread to stop before its next call; returns at once.
  void RequestStop() { stop_.store(true, std::memory_order_relaxed); }
  // Stops between calls and joins; warmed_bytes() is final afterwards. Not
  // concurrently with itself or the destructor.
  void Stop();

 private:
  void Run();

  const std::byte* data_;
  uint64_t size_;
  std::atomic<uint64_t> warmed_{0};
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  bool finished_ = false;  // guarded by mu_: Run returned
  std::thread thread_;
};

}  // namespace crescent::transfer
