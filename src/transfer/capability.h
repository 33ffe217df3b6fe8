// Capabilities: the master's signed permission to touch one byte range of one
// segment. A capability names (segment id, offset, length, operation, expiry) and
// carries tag = HMAC-SHA256(secret, endpoint || those fields). Binding the store
// node's endpoint string (which holds a per-process random shm name, endpoint.h)
// as well as the segment id makes a capability minted for one node worthless on
// another that happens to reuse the id, e.g. after a master restart.
//
// Invariants:
//  - Verify() refuses a wrong tag (forged or widened), a wrong op, and an expiry
//    at or before `now`; bounds are the caller's (the segment's) check.
//  - Expiry is Unix wall-clock milliseconds, so master, store nodes and clients on
//    NTP-synchronised hosts agree on it. A read capability expires with the read
//    lease; a write capability with the put timeout.
//  - The secret is never logged or sent; tags compare in constant time.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/clock.h"  // UnixNowMs: expiries are wall-clock times
#include "crescent/status.h"

namespace crescent::transfer {

// kCopy: the node copies the range into a target that the request names
// (wire.h CopyTarget); kVerify: the node hashes the range and compares it with
// the checksum the request carries. Only the master signs them, to move an
// object between tiers and to check a persistent segment's objects after a
// restart (docs/persistent-tier.md); clients never receive one.
enum class AccessOp : uint8_t { kRead = 1, kWrite = 2, kCopy = 3, kVerify = 4 };

struct Capability {
  uint32_t segment = 0;
  uint64_t offset = 0;
  uint64_t length = 0;
  AccessOp op = AccessOp::kRead;
  int64_t expiry_unix_ms = 0;
  std::array<uint8_t, 32> tag{};
};

class CapabilitySigner {
 public:
  // The secret must be at least kMinSecretBytes long.
  static constexpr size_t kMinSecretBytes = 16;
  static StatusOr<CapabilitySigner> Create(std::string secret);

  Capability Sign(std::string_view binding, uint32_t segment, uint64_t offset, uint64_t length,
                  AccessOp op, int64_t expiry_unix_ms) const;
  // kCapabilityInvalid for a bad tag or op mismatch, kLeaseExpired when expired.
  Status Verify(std::string_view binding, const Capability& cap, AccessOp wanted,
                int64_t now_unix_ms) const;

 private:
  struct Key;  // the secret and its process-unique id (capability.cc)
  explicit CapabilitySigner(std::shared_ptr<const Key> key) : key_(std::move(key)) {}
  // HMAC-SHA256 over the capability's encoding; nullopt when OpenSSL fails.
  std::optional<std::array<uint8_t, 32>> Tag(std::string_view binding, const Capability& cap) const;
  std::shared_ptr<const Key> key_;  // shared by copies; immutable
};

// The cluster secret: the contents of `path` if non-empty, else of the file named
// by $CRESCENT_SECRET_FILE, else the value of $CRESCENT_SECRET. Surrounding
// whitespace is trimmed. kInvalidArgument when none is set, it is too short, or
// the file is a directory or larger than kMaxSecretFileBytes (never read past
// that); kIoError when the file cannot be read.
inline constexpr size_t kMaxSecretFileBytes = 64 << 10;
StatusOr<std::string> LoadClusterSecret(const std::string& path);
// A fresh random secret (for `crescent serve`, which holds both ends).
std::string RandomSecret();

}  // namespace crescent::transfer
