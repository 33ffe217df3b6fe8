// MasterHandlers: the body of every RPC of master.proto, one function each. A
// handler validates the request (server_validation.h), calls the engine, and fills
// the response; the transport (master_server.cc) only moves messages.
//
// Invariants:
//  - Nothing invalid reaches the engine: every field is checked first, and a
//    refused request changes nothing.
//  - Errors travel inside the response (its Status fields); the gRPC status of a
//    handled call is always OK. Batch replies without a top-level status carry a
//    request-level error in every per-key slot, one slot per requested key.
//  - Every replica leaves with a capability bound to its endpoint: WRITE until the
//    put timeout, READ until the read lease ends (converted to Unix time).
//  - Handlers are const and thread-safe; they may take the request's strings.
#pragma once

#include <atomic>
#include <cstdint>

#include "master/master_service.h"
#include "rpc/access.h"
#include "rpc/key_scope.h"
#include "rpc/master_server.h"
#include "rpc/messages.pb.h"
#include "rpc/node_owners.h"
#include "rpc/report_limiter.h"
#include "transfer/capability.h"

namespace crescent::rpc {

class MasterHandlers {
 public:
  MasterHandlers(const MasterServerOptions& options, master::MasterService& master,
                 const transfer::CapabilitySigner& signer)
      : options_(options), master_(master), signer_(signer), nodes_(master) {}

  void MountSegment(const Caller& caller, proto::MountSegmentRequest& req,
                    proto::MountSegmentResponse* resp) const;
  void UnmountSegment(const Caller& caller, proto::UnmountSegmentRequest& req,
                      proto::StatusResponse* resp) const;
  void Heartbeat(const Caller& caller, proto::HeartbeatRequest& req,
                 proto::HeartbeatResponse* resp) const;
  void ListSegments(const Caller& caller, proto::Empty& req,
                    proto::ListSegmentsResponse* resp) const;

  void PutStart(const Caller& caller, proto::PutStartRequest& req,
                proto::PutStartResponse* resp) const;
  void PutEnd(const Caller& caller, proto::PutTokenRequest& req, proto::StatusResponse* resp) const;
  void PutRevoke(const Caller& caller, proto::PutTokenRequest& req,
                 proto::StatusResponse* resp) const;
  void BatchPutStart(const Caller& caller, proto::BatchPutStartRequest& req,
                     proto::BatchPutStartResponse* resp) const;
  void BatchPutEnd(const Caller& caller, proto::BatchPutTokenRequest& req,
                   proto::StatusesResponse* resp) const;
  void BatchPutRevoke(const Caller& caller, proto::BatchPutTokenRequest& req,
                      proto::StatusesResponse* resp) const;

  void GetReplicaList(const Caller& caller, proto::KeyRequest& req, proto::ReadResult* resp) const;
  void BatchGetReplicaList(const Caller& caller, proto::BatchGetReplicaListRequest& req,
                           proto::BatchGetReplicaListResponse* resp) const;
  void Exists(const Caller& caller, proto::KeyRequest& req, proto::ExistsResponse* resp) const;
  void BatchExists(const Caller& caller, proto::KeysRequest& req,
                   proto::BatchExistsResponse* resp) const;
  // The longest stored key of the caller's namespace that prefixes req.key.
  void GetLongestPrefix(const Caller& caller, proto::KeyRequest& req,
                        proto::LongestPrefixResponse* resp) const;
  void BatchQueryPrefix(const Caller& caller, proto::KeysRequest& req,
                        proto::BatchQueryPrefixResponse* resp) const;
  void ReportCorruptReplica(const Caller& caller, proto::ReportCorruptReplicaRequest& req,
                            proto::StatusResponse* resp) const;
  void ReportUnreachable(const Caller& caller, proto::ReportUnreachableRequest& req,
                         proto::StatusResponse* resp) const;

  void Remove(const Caller& caller, proto::RemoveRequest& req, proto::StatusResponse* resp) const;
  void BatchRemove(const Caller& caller, proto::BatchRemoveRequest& req,
                   proto::StatusesResponse* resp) const;
  void RemoveByPrefix(const Caller& caller, proto::RemoveByPrefixRequest& req,
                      proto::CountResponse* resp) const;
  void RemoveAll(const Caller& caller, proto::RemoveAllRequest& req,
                 proto::CountResponse* resp) const;
  void List(const Caller& caller, proto::ListRequest& req, proto::ListResponse* resp) const;
  void EndSession(const Caller& caller, proto::KeysRequest& req, proto::CountResponse* resp) const;
  void TouchKeys(const Caller& caller, proto::KeysRequest& req, proto::CountResponse* resp) const;

  void Stats(const Caller& caller, proto::Empty& req, proto::StatsResponse* resp) const;
  void Snapshot(const Caller& caller, proto::Empty& req, proto::SnapshotResponse* resp) const;
  void ControlEndpoints(const Caller& caller, proto::Empty& req,
                        proto::ControlEndpointsResponse* resp) const;
  void ReadSnapshot(const Caller& caller, proto::ReadSnapshotRequest& req,
                    proto::ReadSnapshotResponse* resp) const;

  // Where the lean control protocol and the Liveness service listen
  // (control_server.h, master_server.h), as the ControlEndpoints RPC answers
  // it; set once, before the server serves.
  struct ControlAdvert {
    uint32_t port = 0;  // 0: none
    std::string unix_socket;
    uint64_t instance = 0;       // this master process; a heartbeat for another is refused
    uint32_t liveness_port = 0;  // the Liveness service; 0: none
  };
  void SetControlAdvert(ControlAdvert advert) { control_ = std::move(advert); }
  // The admin HTTP port the Stats RPC names (0: none); set while serving, once
  // the endpoint has started (after this server).
  void SetAdminPort(uint32_t port) { admin_port_.store(port, std::memory_order_relaxed); }

 private:
  // A started put: its token, and its replicas, each with a WRITE capability;
  // with `cache_ms` (a location cache's ask), a READ capability for each too.
  // A keys call of the engine answered with a count (EndSession, TouchKeys),
  // within the caller's scope.
  using KeysCall = StatusOr<size_t> (master::MasterService::*)(std::span<const std::string>,
                                                               std::string_view);
  void CountKeys(const Caller& caller, proto::KeysRequest& req, proto::CountResponse* resp,
                 KeysCall call) const;
  void FillPut(const master::PutGrant& grant, proto::PutStartResponse* out,
               uint32_t cache_ms = 0) const;
  // BatchPutEnd and BatchPutRevoke: a valid batch with one token per key (and
  // for an end, one checksum per key).
  Status CheckTokens(const proto::BatchPutTokenRequest& req, bool end) const;
  // RemoveAll within the caller's scope (key_scope.h).
  void RemoveAll(const KeyScope& scope, bool force, proto::CountResponse* resp) const;
  // A read result with READ capabilities expiring at the lease end, or, with
  // `cache_ms` (a location cache's ask), that many ms from now when later (at
  // most MasterConfig::location_cache_capability_ms).
  void FillRead(const master::ReadResult& read, proto::ReadResult* out,
                uint32_t cache_ms = 0) const;
  // Unix ms until which a location cache's capability asked for `cache_ms`
  // stays valid (MasterConfig::location_cache_capability_ms bounds it).
  int64_t CacheExpiry(uint32_t cache_ms) const;
  Status CheckBatch(const google::protobuf::RepeatedPtrField<std::string>& keys,
                    bool allow_empty) const;
  // Refuses a batch whose reply, with up to `replicas` replicas per key (no
  // more than there are segments), could exceed the message limit.
  Status CheckReplicaReply(std::string_view rpc,
                           const google::protobuf::RepeatedPtrField<std::string>& keys,
                           uint64_t replicas) const;

  const MasterServerOptions& options_;
  master::MasterService& master_;
  const transfer::CapabilitySigner& signer_;
  ControlAdvert control_;
  std::atomic<uint32_t> admin_port_{0};
  // A node token's own nodes and segments (node_owners.h), and each caller's
  // ReportUnreachable rate (report_limiter.h).
  mutable NodeOwners nodes_;
  mutable ReportLimiter reports_;
};

// A handler, as both transports call it.
template <typename Req, typename Resp>
using HandlerFn = void (MasterHandlers::*)(const Caller&, Req&, Resp*) const;

}  // namespace crescent::rpc
