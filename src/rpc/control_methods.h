// The calls of the control plane, listed once (CRESCENT_CONTROL_CALLS), and the
// numbers of the lean control protocol (docs/control-plane.md): the hot calls of
// master.proto, each carried in a control frame (transfer/wire.h) whose body is
// the same request message the gRPC method takes, and answered with the same
// reply message. Numbers are part of the wire format: append, never renumber.
// Both ends include this; it includes nothing of the server.
#pragma once

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
};
inline constexpr uint8_t kControlMethodMax = 13;

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
  X(ControlEndpoints, Empty, ControlEndpointsResponse, kGrpcOnly)

// The `lean` of a method that only gRPC carries.
inline constexpr std::optional<ControlMethod> kGrpcOnly;

// Every lean number but kHello and kAuthenticate (the connection's own) is one row's.
#define CRESCENT_IS_LEAN(name, Req, Resp, lean) +(std::optional<ControlMethod>(lean) ? 1 : 0)
static_assert(0 CRESCENT_CONTROL_CALLS(CRESCENT_IS_LEAN) == kControlMethodMax - 2,
              "a lean call without its row in CRESCENT_CONTROL_CALLS");
#undef CRESCENT_IS_LEAN

// A call whose answer may wait for the operation log to reach stable storage
// (--log-sync always): the server runs it off its I/O thread.
inline bool MayWaitForLog(ControlMethod m) {
  return m == ControlMethod::kPutEnd || m == ControlMethod::kPutRevoke ||
         m == ControlMethod::kBatchPutEnd || m == ControlMethod::kBatchPutRevoke;
}

}  // namespace crescent::rpc
