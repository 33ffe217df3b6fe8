// PageWarmer: reads one byte of every page of a mapping, once, on a
// background thread at the lowest CPU priority, so that the first transfers
// through a fresh mapping run at the speed of later ones.
//
// Why: MAP_POPULATE (and MADV_POPULATE_WRITE) fill the page tables, but on a
// VM whose hypervisor shadows them (this project's CI machines), the first
// access to each page through a mapping still traps, and accesses from user
// mode and from the kernel pay that separately. So the reads must come from
// the mode that will make the transfers:
//  - Access::kKernel (store nodes, and clients' registered buffers): the TCP
//    data server moves payloads with recv and send, and so does a client's
//    TCP transport into and out of its registered buffers. Measured on a
//    fresh memfd: recv into it 2.5-2.9 ms per MiB on first access against
//    0.2 ms after; touching the pages from user mode first did not help; a
//    kernel read of one byte per page did (0.18-0.22 ms per MiB). The warmer
//    makes those reads with writev of one byte per page into a pipe, 1024
//    pages per call, and drains the pipe.
//  - Access::kUser (same-host clients): a client's get is a memcpy out of its
//    own read-only mapping of the node's segment. Measured on a populated
//    read-only mapping of a written memfd: the first memcpy pass 470-520 us per
//    MiB, later ones 50-75 us; a user-mode read of one byte per page (about
//    1.7 us a page) beforehand brings the first pass to the later ones' speed.
// On bare metal either pass costs tens of milliseconds per GiB.
//
// The warmer only reads, so it never changes a stored byte, and transfers may
// run while it works. Stop() or destruction ends it between calls (kUser: every
// 1024 pages).
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
  enum class Access { kKernel, kUser };
  // Starts warming [data, data + size). Both must stay mapped until the
  // warmer is stopped or destroyed. `what` names the memory in the messages
  // of a warming that fails ("segment", "client buffer").
  PageWarmer(const std::byte* data, uint64_t size, Access access = Access::kKernel,
             const char* what = "segment");
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
  Access access_;
  const char* what_;
  std::atomic<uint64_t> warmed_{0};
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  bool finished_ = false;  // guarded by mu_: Run returned
  std::thread thread_;
};

}  // namespace crescent::transfer
