// Wire format of the TCP data plane: fixed-size little-endian binary frames
// (common/coding.h).
//
// Request (kRequestHeaderSize = 88 bytes), then for a write `payload_length`
// bytes of payload:
//   off  size  field
//     0     4  magic          kRequestMagic ("CRQ1")
//     4     1  version        kVersion
//     5     1  op             AccessOp: 1 read, 2 write
//     6     2  reserved       must be 0
//     8     8  request_id     echoed in the response
//    16     4  cap.segment
//    20     4  reserved       must be 0
//    24     8  cap.offset
//    32     8  cap.length
//    40     8  cap.expiry_unix_ms (signed)
//    48    32  cap.tag
//    80     8  payload_length  == cap.length for a write, 0 for a read, the
//                               copy target's size for a copy, 8 for a verify
//
// A copy (op 3, master only: docs/persistent-tier.md) names its target after
// the header, and the node writes the range there (its own segment: a memcpy;
// another node's: a TCP write) before it answers:
//   off  size  field
//     0     4  target cap.segment
//     4     4  endpoint length E (the target's endpoint string)
//     8     8  target cap.offset
//    16     8  target cap.length (== the source's)
//    24     8  target cap.expiry_unix_ms (signed)
//    32    32  target cap.tag (a write capability)
//    64     E  endpoint
//
// A verify (op 4, master only) carries the range's expected XXH3-64 (8 bytes,
// little-endian) as its payload; the node answers OK or CHECKSUM_MISMATCH.
//
// Response (kResponseHeaderSize = 32 bytes), then `message_length` bytes of
// error text, then `payload_length` bytes of payload:
//   off  size  field
//     0     4  magic          kResponseMagic ("CRS1")
//     4     4  code           crescent::ErrorCode (signed)
//     8     8  request_id
//    16     8  payload_length  cap.length for a successful read, else 0
//    24     2  message_length  <= kMaxErrorMessage; 0 when code is kOk
//    26     6  reserved       must be 0
//
// Control frames (the master's lean control protocol, docs/control-plane.md) share
// the response header above and have a request header of their own
// (kControlHeaderSize = 24 bytes), followed by `body_length` bytes of body (a
// master.proto request message):
//   off  size  field
//     0     4  magic          kControlMagic ("CCQ1")
//     4     1  version        kVersion
//     5     1  method         rpc/control_methods.h
//     6     2  reserved       must be 0
//     8     8  request_id     echoed in the response
//    16     4  body_length    <= the master's message limit
//    20     4  reserved       must be 0
// The response's payload is the reply message; an error response (a frame or
// method the master refuses, or a master that is shutting down) carries only
// its message, and the connection stays usable unless the frame was malformed.
//
// The capability's op is the request's op: a read capability presented with a
// write request fails the HMAC check, so the op cannot be widened either.
// Decoders validate every field they can without the segment, so a garbage
// stream is rejected at its first frame.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "crescent/status.h"
#include "transfer/capability.h"

namespace crescent::transfer::wire {

inline constexpr uint32_t kRequestMagic = 0x31515243;   // "CRQ1" in memory order
inline constexpr uint32_t kResponseMagic = 0x31535243;  // "CRS1" in memory order
inline constexpr uint8_t kVersion = 1;
inline constexpr size_t kRequestHeaderSize = 88;
inline constexpr size_t kResponseHeaderSize = 32;
inline constexpr size_t kMaxErrorMessage = 256;
inline constexpr uint32_t kControlMagic = 0x31514343;  // "CCQ1" in memory order
inline constexpr size_t kControlHeaderSize = 24;

// The SO_RCVLOWAT a reader sets while `left` bytes of a payload are still to
// come, on either side of the connection: the socket reads as ready only once
// the rest of the payload (or `max` bytes of it) has arrived, not at every
// burst, so a large payload wakes its reader a few times instead of dozens. 1
// (the default) for the last 64 KiB, and for headers. The mark must be lowered
// before every wait, as the payload shrinks: a mark above what is still owed
// is never reached. (Linux caps a mark at half of tcp_rmem's maximum and grows
// an autotuned receive buffer to hold it; a kernel that did not could stall
// such a reader until its deadline. None has been seen on 6.18, where the
// server has used these marks since the first TCP round.)
//
// Two steps, chosen by measurement (tcp_path_perf with the mark alternated
// rep by rep in one process, loopback, 2 vCPUs):
//  - kSharedLaneMark for a reader that serves other sockets while it waits
//    (the store node's reactor, a client lane sharing poll() with others):
//    fewer wake-ups leave more time for the others.
//  - kLoneLaneMark for a client lane polled alone, which copies each step out
//    while the sender writes the next. 128 KiB beat both mark 1 (a wake-up per
//    burst) and the whole payload (no overlap): one-object gets +13-19% at
//    1 MiB and +26% at 4 MiB over mark 1; 64 KiB and 512 KiB were slower than
//    mark 1.
inline constexpr uint64_t kSharedLaneMark = 1 << 20;
inline constexpr uint64_t kLoneLaneMark = 128 << 10;
inline int PayloadLowat(uint64_t left, uint64_t max = kSharedLaneMark) {
  constexpr uint64_t kFrom = 64 << 10;
  return left > kFrom ? static_cast<int>(left < max ? left : max) : 1;
}

inline constexpr size_t kCopyTargetFixed = 64;
inline constexpr size_t kCopyTargetMax = kCopyTargetFixed + 512;
inline constexpr size_t kVerifyPayload = 8;

// Where a copy writes: a write capability for the target range and the
// endpoint of the node that holds it.
struct CopyTarget {
  std::string endpoint;
  Capability cap;  // op kWrite
};
std::vector<uint8_t> EncodeCopyTarget(const CopyTarget& target);
// kParseError naming the bad field.
StatusOr<CopyTarget> DecodeCopyTarget(const uint8_t* in, size_t n);

struct RequestHeader {
  uint64_t request_id = 0;
  Capability cap;  // cap.op is the request's op
  uint64_t payload_length = 0;
};

struct ResponseHeader {
  ErrorCode code = ErrorCode::kOk;
  uint64_t request_id = 0;
  uint64_t payload_length = 0;
  uint16_t message_length = 0;
};

using RequestBytes = std::array<uint8_t, kRequestHeaderSize>;
// A response header with room for the longest error message after it.
using ResponseBytes = std::array<uint8_t, kResponseHeaderSize + kMaxErrorMessage>;

void EncodeRequest(const RequestHeader& header, RequestBytes& out);
// kParseError naming the first bad field.
StatusOr<RequestHeader> DecodeRequest(const uint8_t* in);

// Writes the header and `message` (truncated to kMaxErrorMessage) into `out`;
// returns the number of bytes to send before the payload.
size_t EncodeResponse(ErrorCode code, uint64_t request_id, uint64_t payload_length,
                      std::string_view message, ResponseBytes& out);
// Decodes the kResponseHeaderSize bytes at `in`; kParseError naming the bad field.
StatusOr<ResponseHeader> DecodeResponse(const uint8_t* in);

struct ControlHeader {
  uint8_t method = 0;
  uint64_t request_id = 0;
  uint32_t body_length = 0;
};
using ControlBytes = std::array<uint8_t, kControlHeaderSize>;
void EncodeControl(const ControlHeader& header, uint8_t* out);  // kControlHeaderSize bytes
// kParseError naming the first bad field (the method is the caller's to check).
// With `max_body`, also kInvalidArgument for a body longer than that (the
// master's message limit).
StatusOr<ControlHeader> DecodeControl(const uint8_t* in, uint32_t max_body = UINT32_MAX);

// The bytes that follow a control answer's header `h` (decoded by
// DecodeResponse): its reply message, or its error text. kParseError when an
// OK answer claims a reply longer than `max_body` (the client's message
// limit): a reader must never make room for a length it has only been told.
StatusOr<uint64_t> ControlAnswerBody(const ResponseHeader& h, uint64_t max_body);

}  // namespace crescent::transfer::wire
