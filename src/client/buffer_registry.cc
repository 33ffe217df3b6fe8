#include "client/buffer_registry.h"

#include <mutex>

namespace crescent::client {

Status BufferRegistry::Register(const void* ptr, size_t size) {
  auto start = reinterpret_cast<uintptr_t>(ptr);
  if (ptr == nullptr || size == 0) {
    return Status(ErrorCode::kInvalidArgument, "cannot register a null or empty buffer");
  }
  if (start + size < start) return Status(ErrorCode::kInvalidArgument, "buffer wraps around");
  std::unique_lock lock(mu_);
  auto next = regions_.lower_bound(start);
  if (next != regions_.end() && next->first < start + size) {
    return Status(ErrorCode::kInvalidArgument, "buffer overlaps a registered buffer");
  }
  if (next != regions_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second > start) {
      return Status(ErrorCode::kInvalidArgument, "buffer overlaps a registered buffer");
    }
  }
  regions_.emplace(start, size);
  return Status::Ok();
}

Status BufferRegistry::Unregister(const void* ptr) {
  std::unique_lock lock(mu_);
  if (regions_.erase(reinterpret_cast<uintptr_t>(ptr)) == 0) {
    return Status(ErrorCode::kBufferNotRegistered, "no buffer registered at this address");
  }
  return Status::Ok();
}

Status BufferRegistry::Check(const void* ptr, size_t size) const {
  auto start = reinterpret_cast<uintptr_t>(ptr);
  if (ptr == nullptr) return Status(ErrorCode::kInvalidArgument, "null buffer");
  if (start + size < start) return Status(ErrorCode::kInvalidArgument, "buffer wraps around");
  std::shared_lock lock(mu_);
  auto it = regions_.upper_bound(start);
  if (it != regions_.begin()) {
    --it;
    if (start >= it->first && start + size <= it->first + it->second) return Status::Ok();
  }
  return Status(ErrorCode::kBufferNotRegistered,
                "buffer range of " + std::to_string(size) +
                    " bytes is not inside a registered buffer (call RegisterBuffer first)");
}

}  // namespace crescent::client
