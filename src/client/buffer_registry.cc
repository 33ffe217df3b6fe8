#include "client/buffer_registry.h"

#include <cstdio>
#include <mutex>
#include <string>

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
  switch (MappingOf(ptr, size)) {
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
  regions_.emplace(start, Region{size, access});
  return Status::Ok();
}

Status BufferRegistry::Unregister(const void* ptr) {
  std::unique_lock lock(mu_);
  if (regions_.erase(reinterpret_cast<uintptr_t>(ptr)) == 0) {
    return Status(ErrorCode::kBufferNotRegistered, "no buffer registered at this address");
  }
  return Status::Ok();
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
