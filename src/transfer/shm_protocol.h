// The shared-memory protocol (shm_server.h, shm_transport.h). A client sends
// fixed-size requests and receives one fixed-size reply to each. Both ends are
// on one host, so fields are in host byte order at fixed offsets (no padding,
// no struct packing).
//
// Request (kRequestBytes = 74):
//   u32 magic | u32 segment | u64 offset | u64 length | u8 op | i64 expiry_unix_ms
//   | u8[32] tag | u8 kind | u64 address
// Two kinds:
//  - kMap: the first and only request on its connection. The reply carries the
//    segment's memfd (SCM_RIGHTS, attached to the reply's first byte when and
//    only when status == 0), sealed against writable mappings: the client maps
//    it read-only and reads with plain copies. The connection then stays open,
//    idle, as long as the node serves that memory. `address` is 0.
//  - kWrite: the node copies `length` bytes from the client's memory at
//    `address` into (segment, offset) itself (process_vm_readv), checking the
//    write capability before each chunk, and replies when done. Any number of
//    write requests may follow on the same connection, one at a time.
//  - kWriteV: a kWrite whose bytes are in N slices of the client's memory
//    (1 <= N <= kMaxWriteSlices, in `address`), in order: the request is
//    followed by N pairs u64 address | u64 length, non-empty, summing to the
//    capability's length. kWrite and kWriteV may follow each other on a
//    connection.
// Reply (kReplyBytes = 222):
//   u32 magic | i32 status (ErrorCode) | u32 segment id | u64 segment size
//   | u16 message length (<= kMaxMessage) | u8[kMaxMessage] message
#pragma once

#include <sys/socket.h>
#include <sys/un.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "crescent/status.h"
#include "transfer/capability.h"

namespace crescent::transfer::shm {

inline constexpr uint32_t kRequestMagic = 0x4d485343;  // "CSHM"
inline constexpr uint32_t kReplyMagic = 0x52485343;    // "CSHR"
inline constexpr size_t kRequestBytes = 4 + 4 + 8 + 8 + 1 + 8 + 32 + 1 + 8;
static_assert(kRequestBytes == 74);

enum class Kind : uint8_t { kMap = 1, kWrite = 2, kWriteV = 3 };
inline constexpr uint64_t kMaxWriteSlices = 1024;
inline constexpr size_t kSliceBytes = 16;

struct Request {
  Capability cap;
  Kind kind = Kind::kMap;
  uint64_t address = 0;  // kWrite: where the bytes are in the client's memory; kWriteV: N
  struct Slice {
    uint64_t address = 0;
    uint64_t length = 0;
  };
  std::vector<Slice> slices{};  // kWriteV: the table after the request
};
inline constexpr size_t kMaxMessage = 200;
inline constexpr size_t kReplyBytes = 4 + 4 + 4 + 8 + 2 + kMaxMessage;

namespace detail {
template <typename T>
inline void Put(uint8_t*& p, T v) {
  std::memcpy(p, &v, sizeof v);
  p += sizeof v;
}
template <typename T>
inline T Get(const uint8_t*& p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  p += sizeof v;
  return v;
}
}  // namespace detail

inline void EncodeRequest(const Request& r, uint8_t (&out)[kRequestBytes]) {
  uint8_t* p = out;
  detail::Put(p, kRequestMagic);
  detail::Put(p, r.cap.segment);
  detail::Put(p, r.cap.offset);
  detail::Put(p, r.cap.length);
  detail::Put(p, static_cast<uint8_t>(r.cap.op));
  detail::Put(p, r.cap.expiry_unix_ms);
  std::memcpy(p, r.cap.tag.data(), r.cap.tag.size());
  p += r.cap.tag.size();
  detail::Put(p, static_cast<uint8_t>(r.kind));
  detail::Put(p, r.address);
}

// False for a wrong magic, an op that is neither read nor write, an unknown
// kind, a write request without a write capability or an address, and a map
// request with an address.
inline bool DecodeRequest(const uint8_t (&in)[kRequestBytes], Request& r) {
  const uint8_t* p = in;
  if (detail::Get<uint32_t>(p) != kRequestMagic) return false;
  Capability& cap = r.cap;
  cap.segment = detail::Get<uint32_t>(p);
  cap.offset = detail::Get<uint64_t>(p);
  cap.length = detail::Get<uint64_t>(p);
  uint8_t op = detail::Get<uint8_t>(p);
  if (op != static_cast<uint8_t>(AccessOp::kRead) && op != static_cast<uint8_t>(AccessOp::kWrite)) {
    return false;
  }
  cap.op = static_cast<AccessOp>(op);
  cap.expiry_unix_ms = detail::Get<int64_t>(p);
  std::memcpy(cap.tag.data(), p, cap.tag.size());
  p += cap.tag.size();
  uint8_t kind = detail::Get<uint8_t>(p);
  r.address = detail::Get<uint64_t>(p);
  if (kind == static_cast<uint8_t>(Kind::kMap)) {
    r.kind = Kind::kMap;
    return r.address == 0;
  }
  if (kind == static_cast<uint8_t>(Kind::kWrite)) {
    r.kind = Kind::kWrite;
    return cap.op == AccessOp::kWrite && r.address != 0;
  }
  if (kind == static_cast<uint8_t>(Kind::kWriteV)) {
    r.kind = Kind::kWriteV;
    r.slices.clear();
    return cap.op == AccessOp::kWrite && r.address >= 1 && r.address <= kMaxWriteSlices;
  }
  return false;
}

// kWriteV: the slice table's bytes after the request (none for other kinds).
inline void AppendSlices(const Request& r, std::string& out) {
  if (r.kind != Kind::kWriteV) return;
  for (const Request::Slice& slice : r.slices) {
    char pair[kSliceBytes];
    std::memcpy(pair, &slice.address, 8);
    std::memcpy(pair + 8, &slice.length, 8);
    out.append(pair, sizeof pair);
  }
}

// Reads a kWriteV's table (r.address pairs, `in` holding exactly their
// bytes) into r.slices; false unless every slice is non-empty with an address
// and they sum to the capability's length.
inline bool DecodeSlices(const uint8_t* in, size_t bytes, Request& r) {
  if (r.kind != Kind::kWriteV || bytes != r.address * kSliceBytes) return false;
  r.slices.resize(r.address);
  uint64_t sum = 0;
  for (Request::Slice& slice : r.slices) {
    std::memcpy(&slice.address, in, 8);
    std::memcpy(&slice.length, in + 8, 8);
    in += kSliceBytes;
    if (slice.address == 0 || slice.length == 0 || slice.length > r.cap.length) return false;
    sum += slice.length;
  }
  return sum == r.cap.length;
}

struct Reply {
  ErrorCode code = ErrorCode::kOk;
  uint32_t segment = 0;
  uint64_t size = 0;
  std::string message;  // truncated to kMaxMessage on encode
};

inline void EncodeReply(const Reply& r, uint8_t (&out)[kReplyBytes]) {
  std::memset(out, 0, kReplyBytes);
  uint8_t* p = out;
  detail::Put(p, kReplyMagic);
  detail::Put(p, static_cast<int32_t>(r.code));
  detail::Put(p, r.segment);
  detail::Put(p, r.size);
  uint16_t len = static_cast<uint16_t>(std::min(r.message.size(), kMaxMessage));
  detail::Put(p, len);
  std::memcpy(p, r.message.data(), len);
}

// False for a wrong magic or an oversized message length.
inline bool DecodeReply(const uint8_t (&in)[kReplyBytes], Reply& r) {
  const uint8_t* p = in;
  if (detail::Get<uint32_t>(p) != kReplyMagic) return false;
  r.code = static_cast<ErrorCode>(detail::Get<int32_t>(p));
  r.segment = detail::Get<uint32_t>(p);
  r.size = detail::Get<uint64_t>(p);
  uint16_t len = detail::Get<uint16_t>(p);
  if (len > kMaxMessage) return false;
  r.message.assign(reinterpret_cast<const char*>(p), len);
  return true;
}

// The address of abstract socket `name` (sun_path[0] = '\0', then the name, not
// NUL-terminated: its length is part of the address). False when the name is
// empty or too long.
inline bool AbstractAddress(std::string_view name, sockaddr_un& addr, socklen_t& len) {
  if (name.empty() || name.size() + 1 > sizeof(addr.sun_path)) return false;
  std::memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path + 1, name.data(), name.size());
  len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  return true;
}

}  // namespace crescent::transfer::shm
