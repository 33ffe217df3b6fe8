// SegmentMemory: one store-node segment. A DRAM segment is a memfd mapped
// MAP_SHARED, its pages reserved (fallocate) and mapped (MAP_POPULATE) at
// creation; a persistent one is a file mapped through libpmem2 (pmem_file.h). Create() first
// refuses a size the host cannot give (AvailableSegmentMemory, common/host_memory.h). The TCP data
// server reads and writes it in place; the shm server hands its fd to same-host
// clients, who map the same pages.
//
// Resolve() is the single gate every server-side access goes through: it checks
// that the capability names this segment's current id, that [offset, offset +
// length) lies inside the segment, and the HMAC/op/expiry (CapabilitySigner).
// The id is 0 until the node mounts; the id and the binding change together when
// it remounts (SetMount). With a ClockGate (SetClockGate), Resolve and every
// fence check also refuse while the node's clock disagrees with the master's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "common/fd.h"
#include "crescent/status.h"
#include "transfer/capability.h"
#include "transfer/clock_gate.h"
#include "transfer/pmem_file.h"

namespace crescent::transfer {

// The most bytes a transfer moves into or out of a segment between two checks
// of its SegmentMemory::Fence, on TCP and on shared memory: what lands after a
// fence stops holding (a node frozen between its check and its copy, or a
// remount during one) is at most this much. 256 KiB: a TCP step still moves
// far more than a system call costs, and a shared-memory write copies it in
// about 20 us.
inline constexpr uint64_t kFenceStep = 256 << 10;
// The next chunk of a transfer with `left` bytes to go.
inline uint64_t FenceStep(uint64_t left) { return left < kFenceStep ? left : kFenceStep; }

class SegmentMemory {
 public:
  // A memfd of `size` bytes named `name` (the name only labels /proc/PID/fd).
  // kNoSpace, before anything is allocated, when `size` exceeds
  // AvailableSegmentMemory(), and when the kernel refuses the memory.
  static StatusOr<std::unique_ptr<SegmentMemory>> Create(const std::string& name, uint64_t size);
  // A persistent segment: the data of the file at `path` (pmem_file.h), the
  // file `file_size` bytes. Writes into it are made durable by Persist().
  static StatusOr<std::unique_ptr<SegmentMemory>> OpenPersistent(const std::string& path,
                                                                 uint64_t file_size);
  ~SegmentMemory();
  SegmentMemory(const SegmentMemory&) = delete;
  SegmentMemory& operator=(const SegmentMemory&) = delete;

  std::byte* data() const { return data_; }
  uint64_t size() const { return size_; }
  // What same-host clients map: the memfd, or the persistent file read-only.
  int fd() const { return pmem_ ? pmem_->read_fd() : fd_.get(); }
  // The persistent file behind the segment; null for DRAM.
  const PmemFile* persistent() const { return pmem_.get(); }
  // Makes written bytes durable before a write is acknowledged: a no-op for
  // DRAM, libpmem2's persist (CPU flushes or msync) for a persistent segment.
  void Persist(const std::byte* p, size_t n) const {
    if (pmem_) pmem_->Persist(p, n);
  }

  // The mount identity: the segment id the master assigned (0: not mounted;
  // Resolve refuses all) and the capability binding, the endpoint string the
  // node mounted with (capability.h), which carries the mount's epoch
  // (endpoint.h). Both change together at each remount, so a capability
  // minted for an earlier mount fails Resolve from the moment SetMount returns.
  struct Identity {
    uint32_t id = 0;
    std::string binding;
  };
  void SetMount(uint32_t id, std::string binding);
  void SetBinding(std::string binding);  // keeps the id
  void SetId(uint32_t id);               // keeps the binding
  uint32_t id() const { return identity()->id; }
  std::string binding() const;
  std::shared_ptr<const Identity> identity() const;
  // What a transfer checks again before each chunk it moves: its capability
  // has not expired and the segment is still the mount that capability was
  // resolved against (Resolve fills it in). A chunk is at most kFenceStep
  // bytes (FenceStep), on every path, so a verdict covers no more than that.
  class Fence {
   public:
    bool Holds() const {
      const int64_t now = UnixNowMs();
      return now < expiry_unix_ms_ && segment_ != nullptr && segment_->identity() == mount_ &&
             (segment_->clock_gate_ == nullptr || segment_->clock_gate_->Open(now));
    }
    int64_t expiry_unix_ms() const { return expiry_unix_ms_; }
    // The endpoint of the mount it was resolved against ("" before Resolve).
    std::string_view binding() const { return mount_ ? std::string_view(mount_->binding) : ""; }

   private:
    friend class SegmentMemory;
    const SegmentMemory* segment_ = nullptr;
    std::shared_ptr<const Identity> mount_;
    int64_t expiry_unix_ms_ = 0;
  };

  // The node's clock gate (clock_gate.h), which must outlive the segment; set
  // before the segment serves. None: clocks are not checked.
  void SetClockGate(const ClockGate* gate) { clock_gate_ = gate; }

  // The checked range for `cap`, or kCapabilityInvalid / kLeaseExpired /
  // kSegmentNotFound (wrong id) / kInvalidArgument (out of bounds) /
  // kUnavailable (the clock gate is closed).
  // With `fence`, also fills it in for the transfer that follows.
  StatusOr<std::byte*> Resolve(const Capability& cap, AccessOp op, const CapabilitySigner& signer,
                               int64_t now_unix_ms, Fence* fence = nullptr) const;

 private:
  SegmentMemory(ScopedFd fd, std::byte* data, uint64_t size)
      : fd_(std::move(fd)), data_(data), size_(size) {}
  explicit SegmentMemory(std::unique_ptr<PmemFile> pmem)
      : data_(pmem->data()), size_(pmem->data_size()), pmem_(std::move(pmem)) {}
  ScopedFd fd_;  // the memfd of a DRAM segment
  std::byte* data_;
  uint64_t size_;
  std::unique_ptr<PmemFile> pmem_;  // set for a persistent segment (it owns the mapping)
  const ClockGate* clock_gate_ = nullptr;
  mutable std::mutex identity_mu_;  // guards identity_ (the pointer; the Identity is immutable)
  std::shared_ptr<const Identity> identity_ = std::make_shared<const Identity>();
};

}  // namespace crescent::transfer
