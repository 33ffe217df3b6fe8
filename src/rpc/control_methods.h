// The calls of the lean control protocol (docs/network.md): the hot calls of
// master.proto, each carried in a control frame (transfer/wire.h) whose body is
// the same request message the gRPC method takes, and answered with the same
// reply message. Numbers are part of the wire format: append, never renumber.
// Both ends include this; it includes nothing of the server.
#pragma once

#include <cstdint>

namespace crescent::rpc {

enum class ControlMethod : uint8_t {
  kHello = 1,  // Empty -> ControlEndpointsResponse (which master answers)
  kPutStart = 2,
  kPutEnd = 3,
  kPutRevoke = 4,
  kBatchPutStart = 5,
  kBatchPutEnd = 6,
  kBatchPutRevoke = 7,
  kGetReplicaList = 8,
  kBatchGetReplicaList = 9,
  kExists = 10,
  kBatchExists = 11,
  kBatchQueryPrefix = 12,
  // One message of the authentication handshake (auth/handshake_wire.h) ->
  // the server's next one, both raw bytes, not protobuf (docs/security.md).
  kAuthenticate = 13,
};
inline constexpr uint8_t kControlMethodMax = 13;

// A call whose answer may wait for the operation log to reach stable storage
// (--log-sync always): the server runs it off its I/O thread.
inline bool MayWaitForLog(ControlMethod m) {
  return m == ControlMethod::kPutEnd || m == ControlMethod::kPutRevoke ||
         m == ControlMethod::kBatchPutEnd || m == ControlMethod::kBatchPutRevoke;
}

}  // namespace crescent::rpc
