#include "client/buffer_registry.h"

#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "client/memory_map.h"

namespace crescent::client {
namespace {

std::string Describe(const void* ptr, size_t size) {
  char at[32];
  std::snprintf(at, sizeof at, "%p", ptr);
  return "buffer of " + std::to_string(size) + " bytes at " + at;
}

}  // namespace

Status BufferRegistry::Register(const void* ptr, size_t size, BufferAccess access) {
  auto start = reinterpret_cast<uintptr_t>(ptr);
  if (ptr == nullptr || size == 0) {
    return Status(ErrorCode::kInvalidArgument, "cannot register a null or empty buffer");
  }
  if (start + size < start) return Status(ErrorCode::kInvalidArgument, "buffer wraps around");
  bool maps_file = false;
  switch (MappingOf(ptr, size, &maps_file)) {
    case Mapping::kUnmapped:
      return Status(ErrorCode::kInvalidArgument,
                    Describe(ptr, size) + " is not mapped readable memory in this process");
    case Mapping::kReadOnly:
      if (access == BufferAccess::kReadWrite) {
        return Status(ErrorCode::kInvalidArgument,
                      Describe(ptr, size) +
                          " is read-only memory, which a get cannot write into: register it "
                          "read-only (BufferAccess::kReadOnly) to put from it");
      }
      break;
    case Mapping::kReadWrite: break;
  }
  std::unique_lock lock(mu_);
  auto next = regions_.lower_bound(start);
  if (next != regions_.end() && next->first < start + size) {
    return Status(ErrorCode::kInvalidArgument, "buffer overlaps a registered buffer");
  }
  if (next != regions_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second.size > start) {
      return Status(ErrorCode::kInvalidArgument, "buffer overlaps a registered buffer");
    }
  }
  std::shared_ptr<transfer::PageWarmer> warmer;
  if (warm_ && !maps_file) {
    warmer = std::make_shared<transfer::PageWarmer>(static_cast<const std::byte*>(ptr), size,
                                                    transfer::PageWarmer::Access::kKernel,
                                                    "client buffer");
  }
  regions_.emplace(start, Region{size, access, std::move(warmer)});
  return Status::Ok();
}

Status BufferRegistry::Unregister(const void* ptr) {
  std::shared_ptr<transfer::PageWarmer> warmer;
  {
    std::unique_lock lock(mu_);
    auto it = regions_.find(reinterpret_cast<uintptr_t>(ptr));
    if (it == regions_.end()) {
      return Status(ErrorCode::kBufferNotRegistered, "no buffer registered at this address");
    }
    warmer = std::move(it->second.warmer);
    regions_.erase(it);
  }
  // Outside the lock (it joins a call of up to 1024 pages); a WaitWarm holding
  // this warmer too returns once it stopped.
  if (warmer) warmer->Stop();
  return Status::Ok();
}

void BufferRegistry::WaitWarm() const {
  std::vector<std::shared_ptr<transfer::PageWarmer>> warmers;
  {
    std::shared_lock lock(mu_);
    for (const auto& [start, region] : regions_) {
      if (region.warmer) warmers.push_back(region.warmer);
    }
  }
  for (const auto& w : warmers) w->Wait();
}

uint64_t BufferRegistry::warmed_bytes() const {
  std::shared_lock lock(mu_);
  uint64_t total = 0;
  for (const auto& [start, region] : regions_) {
    if (region.warmer) total += region.warmer->warmed_bytes();
  }
  return total;
}

Status BufferRegistry::Check(const void* ptr, size_t size, BufferAccess need) const {
  auto start = reinterpret_cast<uintptr_t>(ptr);
  if (ptr == nullptr) return Status(ErrorCode::kInvalidArgument, "null buffer");
  if (start + size < start) return Status(ErrorCode::kInvalidArgument, "buffer wraps around");
  std::shared_lock lock(mu_);
  auto it = regions_.upper_bound(start);
  if (it != regions_.begin()) {
    --it;
    if (start >= it->first && start + size <= it->first + it->second.size) {
      if (need == BufferAccess::kReadWrite && it->second.access == BufferAccess::kReadOnly) {
        return Status(ErrorCode::kInvalidArgument,
                      "destination " + Describe(ptr, size) +
                          " lies in a buffer registered read-only: a get cannot write into it");
      }
      return Status::Ok();
    }
  }
  return Status(ErrorCode::kBufferNotRegistered,
                "buffer range of " + std::to_string(size) +
                    " bytes is not inside a registered buffer (call RegisterBuffer first)");
}

}  // namespace crescent::client
