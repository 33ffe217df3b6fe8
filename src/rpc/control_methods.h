// The calls of the control plane, listed once (CRESCENT_CONTROL_CALLS), and the
// numbers of the lean control protocol (docs/control-plane.md): the hot calls of
// master.proto, each carried in a control frame (transfer/wire.h) whose body is
// the same request message the gRPC method takes, and answered with the same
// reply message. Numbers are part of the wire format: append, never renumber.
// Both ends include this; it includes nothing of the server.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

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
  // Any call of the table below by its row (RpcMethod): the body is the row's
  // number in one byte, then the request message; the answer is the reply
  // message. A client that authenticated its connection sends every call that
  // has no number of its own this way, since gRPC carries no credential yet
  // (docs/security.md).
  kCall = 14,
  kGetLongestPrefix = 15,
  kTouchKeys = 16,
};
inline constexpr uint8_t kControlMethodMax = 16;

// Every method of the Master service, in master.proto's order (rpc_control_test
// checks both): X(name, request, reply, lean), the request and reply being
// messages of crescent.proto (messages.proto) and `lean` the lean protocol's
// number for a hot call, else kGrpcOnly. The client's call descriptors
// (control_transport.h), the server's methods by name (server_metrics.h), its
// gRPC calls (master_server.cc) and its lean dispatch (control_server.cc) are
// all expanded from this table.
#define CRESCENT_CONTROL_CALLS(X)                                                              \
  X(MountSegment, MountSegmentRequest, MountSegmentResponse, kGrpcOnly)                        \
  X(UnmountSegment, UnmountSegmentRequest, StatusResponse, kGrpcOnly)                          \
  X(Heartbeat, HeartbeatRequest, HeartbeatResponse, kGrpcOnly)                                 \
  X(ListSegments, Empty, ListSegmentsResponse, kGrpcOnly)                                      \
  X(ReportUnreachable, ReportUnreachableRequest, StatusResponse, kGrpcOnly)                    \
  X(PutStart, PutStartRequest, PutStartResponse, ControlMethod::kPutStart)                     \
  X(PutEnd, PutTokenRequest, StatusResponse, ControlMethod::kPutEnd)                           \
  X(PutRevoke, PutTokenRequest, StatusResponse, ControlMethod::kPutRevoke)                     \
  X(BatchPutStart, BatchPutStartRequest, BatchPutStartResponse, ControlMethod::kBatchPutStart) \
  X(BatchPutEnd, BatchPutTokenRequest, StatusesResponse, ControlMethod::kBatchPutEnd)          \
  X(BatchPutRevoke, BatchPutTokenRequest, StatusesResponse, ControlMethod::kBatchPutRevoke)    \
  X(GetReplicaList, KeyRequest, ReadResult, ControlMethod::kGetReplicaList)                    \
  X(BatchGetReplicaList, BatchGetReplicaListRequest, BatchGetReplicaListResponse,              \
    ControlMethod::kBatchGetReplicaList)                                                       \
  X(Exists, KeyRequest, ExistsResponse, ControlMethod::kExists)                                \
  X(BatchExists, KeysRequest, BatchExistsResponse, ControlMethod::kBatchExists)                \
  X(BatchQueryPrefix, KeysRequest, BatchQueryPrefixResponse, ControlMethod::kBatchQueryPrefix) \
  X(ReportCorruptReplica, ReportCorruptReplicaRequest, StatusResponse, kGrpcOnly)              \
  X(Remove, RemoveRequest, StatusResponse, kGrpcOnly)                                          \
  X(BatchRemove, BatchRemoveRequest, StatusesResponse, kGrpcOnly)                              \
  X(RemoveByPrefix, RemoveByPrefixRequest, CountResponse, kGrpcOnly)                           \
  X(RemoveAll, RemoveAllRequest, CountResponse, kGrpcOnly)                                     \
  X(List, ListRequest, ListResponse, kGrpcOnly)                                                \
  X(Stats, Empty, StatsResponse, kGrpcOnly)                                                    \
  X(Snapshot, Empty, SnapshotResponse, kGrpcOnly)                                              \
  X(ControlEndpoints, Empty, ControlEndpointsResponse, kGrpcOnly)                              \
  X(ReadSnapshot, ReadSnapshotRequest, ReadSnapshotResponse, kGrpcOnly)                        \
  X(EndSession, KeysRequest, CountResponse, kGrpcOnly)                                         \
  X(GetLongestPrefix, KeyRequest, LongestPrefixResponse, ControlMethod::kGetLongestPrefix)     \
  X(TouchKeys, KeysRequest, CountResponse, ControlMethod::kTouchKeys)

// The `lean` of a method that only gRPC carries.
inline constexpr std::optional<ControlMethod> kGrpcOnly;

// Every lean number but kHello, kAuthenticate (the connection's own) and kCall
// is one row's.
#define CRESCENT_IS_LEAN(name, Req, Resp, lean) +(std::optional<ControlMethod>(lean) ? 1 : 0)
static_assert(0 CRESCENT_CONTROL_CALLS(CRESCENT_IS_LEAN) == kControlMethodMax - 3,
              "a lean call without its row in CRESCENT_CONTROL_CALLS");
#undef CRESCENT_IS_LEAN

// One per row of the table, in its order; the names are the proto's method
// names. A row's number is part of the wire format (kCall carries it).
enum class RpcMethod : uint8_t {
#define CRESCENT_RPC_METHOD(name, Req, Resp, lean) k##name,
  CRESCENT_CONTROL_CALLS(CRESCENT_RPC_METHOD)
#undef CRESCENT_RPC_METHOD
};
#define CRESCENT_RPC_METHOD_COUNT(name, Req, Resp, lean) +1
inline constexpr size_t kRpcMethodCount = 0 CRESCENT_CONTROL_CALLS(CRESCENT_RPC_METHOD_COUNT);
#undef CRESCENT_RPC_METHOD_COUNT

// Whether a draining master (MasterServer::BeginDrain) still serves the call:
// a store node's own (its unmount and heartbeats, while the node shuts down
// with it) and the read-only views; every other call is answered UNAVAILABLE.
inline bool ServedWhileDraining(RpcMethod m) {
  return m == RpcMethod::kUnmountSegment || m == RpcMethod::kHeartbeat ||
         m == RpcMethod::kListSegments || m == RpcMethod::kStats ||
         m == RpcMethod::kControlEndpoints;
}

// Whether a master that authenticates its clients answers the call on a
// connection that carries no credential (gRPC's, today): only where the lean
// protocol is, which a client must learn before it can authenticate.
inline bool ServedWithoutToken(RpcMethod m) { return m == RpcMethod::kControlEndpoints; }

// A call whose answer may wait for the operation log to reach stable storage
// (--log-sync always): the server runs it off its I/O thread.
inline bool MayWaitForLog(ControlMethod m) {
  return m == ControlMethod::kPutEnd || m == ControlMethod::kPutRevoke ||
         m == ControlMethod::kBatchPutEnd || m == ControlMethod::kBatchPutRevoke;
}

}  // namespace crescent::rpc
