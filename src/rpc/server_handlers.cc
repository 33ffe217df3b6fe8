#include "rpc/server_handlers.h"

#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

#include "common/clock.h"
#include "master/master_metrics.h"
#include "master/tenant_key.h"
#include "rpc/convert.h"
#include "rpc/key_scope.h"
#include "rpc/server_validation.h"

namespace crescent::rpc {
namespace {

// How long a mount's proof of the secret stays valid; the node checks it on
// receipt, so this only needs to outlast the reply (and modest clock skew).
constexpr int64_t kMountProofMs = 10 * 60 * 1000;

// One status per slot, for batch replies that carry no top-level status. The
// first slot says why; the others only point at it, so that the refusal of a
// batch too large to answer is itself small (a few bytes per key).
template <typename Slots, typename Fill>
void FailEverySlot(int n, const Status& status, Slots* slots, Fill fill) {
  const Status brief(status.code(), "the batch was refused (see the first result)");
  for (int i = 0; i < n; ++i) fill(slots->Add(), i == 0 ? status : brief);
}

void FillStatusSlot(proto::Status* slot, const Status& status) { ToProto(status, slot); }

void FillStatuses(const KeyScope& scope, const std::vector<Status>& statuses,
                  proto::StatusesResponse* resp) {
  for (const Status& s : statuses) ToProto(scope.Shown(s), resp->add_statuses());
}

}  // namespace

Status MasterHandlers::CheckBatch(const google::protobuf::RepeatedPtrField<std::string>& keys,
                                  bool allow_empty) const {
  return CheckKeys(keys, options_.max_batch, allow_empty);
}

Status MasterHandlers::CheckReplicaReply(
    std::string_view rpc, const google::protobuf::RepeatedPtrField<std::string>& keys,
    uint64_t replicas) const {
  // An object's replicas are on distinct segments.
  std::vector<master::SegmentInfo> segments = master_.ListSegments();
  uint64_t endpoint_bytes = 0;
  for (const master::SegmentInfo& s : segments) {
    endpoint_bytes = std::max<uint64_t>(endpoint_bytes, s.spec.endpoint.size());
  }
  replicas = std::min<uint64_t>(std::max<uint64_t>(replicas, 1), segments.size());
  return CheckReplyFits(rpc, static_cast<size_t>(keys.size()),
                        BatchReplyBound(keys, replicas, endpoint_bytes),
                        static_cast<uint64_t>(options_.max_message_bytes));
}

int64_t MasterHandlers::CacheExpiry(uint32_t cache_ms) const {
  const int64_t cache_for =
      std::min<int64_t>(cache_ms, master_.config().location_cache_capability_ms);
  return ToUnixMs(master_.clock().NowMs() + cache_for, master_.clock());
}

void MasterHandlers::FillPut(const master::PutGrant& grant, proto::PutStartResponse* out,
                             uint32_t cache_ms) const {
  // The put's own deadline, not now + the timeout: a retried PutStart, or one
  // late in a batch, must not outlive the space the master keeps for it.
  const int64_t expiry = ToUnixMs(grant.deadline, master_.clock());
  out->set_token(grant.token);
  for (const master::ReplicaDescriptor& d : grant.replicas) {
    proto::Replica* r = out->add_replicas();
    r->set_endpoint(d.endpoint);
    r->set_placement(d.placement);
    ToProto(
        signer_.Sign(d.endpoint, d.segment, d.offset, d.length, transfer::AccessOp::kWrite, expiry),
        r->mutable_cap());
  }
  if (cache_ms == 0 || master_.config().location_cache_capability_ms <= 0) return;
  // For the location cache once the put has ended; nothing holds the space
  // for them: a read through one after the space changed hands fails the
  // reader's checksum.
  const int64_t read_expiry = CacheExpiry(cache_ms);
  for (const master::ReplicaDescriptor& d : grant.replicas) {
    ToProto(signer_.Sign(d.endpoint, d.segment, d.offset, d.length, transfer::AccessOp::kRead,
                         read_expiry),
            out->add_read_caps());
  }
}

void MasterHandlers::FillRead(const master::ReadResult& read, proto::ReadResult* out,
                              uint32_t cache_ms) const {
  // The lease end is on the engine's clock; the capability needs Unix time,
  // so carry over the remaining lease duration.
  const int64_t lease_end = ToUnixMs(read.lease_expiry, master_.clock());
  out->set_size(read.size);
  out->set_checksum(read.checksum);
  out->set_lease_expiry_unix_ms(lease_end);
  // A location cache's capability outlives the lease; nothing holds its space
  // past the lease, so a late read may meet another object's bytes, which the
  // reader's checksum refuses (docs/capabilities.md, "Location cache").
  const int64_t expiry = cache_ms == 0 ? lease_end : std::max(lease_end, CacheExpiry(cache_ms));
  for (const master::ReplicaDescriptor& d : read.replicas) {
    proto::Replica* r = out->add_replicas();
    r->set_endpoint(d.endpoint);
    r->set_placement(d.placement);
    ToProto(
        signer_.Sign(d.endpoint, d.segment, d.offset, d.length, transfer::AccessOp::kRead, expiry),
        r->mutable_cap());
  }
  ToProto(Status::Ok(), out->mutable_status());
}

// ---- Segments ----

void MasterHandlers::MountSegment(const Caller& caller, proto::MountSegmentRequest& req,
                                  proto::MountSegmentResponse* resp) const {
  if (auto s = CheckSegmentSpec(req.spec()); !s.ok()) return ToProto(s, resp->mutable_status());
  // Only compared with the restored segment's; bounded like any string.
  constexpr size_t kMaxPreviousEndpoint = 4096;
  constexpr int kMaxEarlierMounts = 8;
  if (req.previous_endpoint().size() > kMaxPreviousEndpoint) {
    return ToProto(Status(ErrorCode::kInvalidArgument, "previous endpoint is too long"),
                   resp->mutable_status());
  }
  if (req.earlier_mounts_size() > kMaxEarlierMounts) {
    return ToProto(
        Status(ErrorCode::kInvalidArgument,
               "more than " + std::to_string(kMaxEarlierMounts) + " earlier mounts offered"),
        resp->mutable_status());
  }
  master::PreviousMount previous{req.previous_endpoint(), req.previous_owner_token(), {}};
  for (const proto::EarlierMount& m : req.earlier_mounts()) {
    if (m.endpoint().size() > kMaxPreviousEndpoint) {
      return ToProto(Status(ErrorCode::kInvalidArgument, "earlier endpoint is too long"),
                     resp->mutable_status());
    }
    previous.earlier.push_back({m.endpoint(), m.owner_token()});
  }
  bool adopted = false;
  const master::SegmentSpec spec = FromProto(req.spec());
  StatusOr<master::SegmentId> id = master::kNoSegment;
  Status s = nodes_.Mount(caller, spec, [&] {
    id = master_.MountSegment(spec, previous.endpoint.empty() ? nullptr : &previous, &adopted);
    return id.status();
  });
  ToProto(s, resp->mutable_status());
  if (!s.ok()) return;
  resp->set_segment_id(*id);
  resp->set_adopted(adopted);
  ToProto(signer_.Sign(req.spec().endpoint(), *id, 0, 0, transfer::AccessOp::kRead,
                       UnixNowMs() + kMountProofMs),
          resp->mutable_proof());
}

void MasterHandlers::UnmountSegment(const Caller& caller, proto::UnmountSegmentRequest& req,
                                    proto::StatusResponse* resp) const {
  Status s = CheckName("segment name", req.name());
  if (s.ok()) s = CheckName("owner node", req.owner_node());
  if (s.ok()) s = nodes_.CheckUnmount(caller, req.name());
  // An admin unmounts any segment, without its node's owner token.
  const bool admin = caller.role == auth::Role::kAdmin;
  if (s.ok()) s = master_.UnmountSegment(req.name(), req.owner_node(), req.owner_token(), admin);
  ToProto(s, resp->mutable_status());
}

void MasterHandlers::Heartbeat(const Caller& caller, proto::HeartbeatRequest& req,
                               proto::HeartbeatResponse* resp) const {
  Status s = CheckName("node", req.node());
  if (s.ok()) s = nodes_.CheckHeartbeat(caller, req.node());
  if (s.ok() && req.master_instance() != 0 && req.master_instance() != control_.instance) {
    s = Status(ErrorCode::kUnavailable, "this heartbeat is for another master process (instance " +
                                            std::to_string(req.master_instance()) + ")");
  }
  if (s.ok()) s = master_.Heartbeat(req.node());
  ToProto(s, resp->mutable_status());
  proto::MasterClock* clock = resp->mutable_clock();
  clock->set_capability_grace_ms(master_.config().capability_grace_ms);
  clock->set_capability_lifetime_ms(master_.LongestCapabilityMs());
  clock->set_unix_ms(UnixNowMs());  // last: the closest to the reply
}

void MasterHandlers::ReportUnreachable(const Caller& caller, proto::ReportUnreachableRequest& req,
                                       proto::StatusResponse* resp) const {
  Status s;
  if (req.segments().empty()) {
    s = Status(ErrorCode::kInvalidArgument, "report names no segment");
  } else if (static_cast<uint64_t>(req.segments_size()) > options_.max_batch) {
    s = Status(ErrorCode::kInvalidArgument, "report of " + std::to_string(req.segments_size()) +
                                                " segments exceeds the limit of " +
                                                std::to_string(options_.max_batch));
  } else if (s = reports_.Take(caller); s.ok()) {
    // A token's report spares the last node that heartbeats (a client may
    // not stop every put); an admin, or anyone on a master without
    // credentials, may suspect them all (SegmentTable::MarkUnreachable).
    const bool spare_last = caller.role && *caller.role != auth::Role::kAdmin;
    const std::vector<master::SegmentId> ids(req.segments().begin(), req.segments().end());
    (void)master_.ReportUnreachable(ids, spare_last);  // stale ids (unmounted since) change nothing
  }
  ToProto(s, resp->mutable_status());
}

void MasterHandlers::ListSegments(const Caller&, proto::Empty&,
                                  proto::ListSegmentsResponse* resp) const {
  for (const master::SegmentInfo& info : master_.ListSegments()) {
    ToProto(info, resp->add_segments());
  }
  ToProto(Status::Ok(), resp->mutable_status());
}

// ---- Puts ----

void MasterHandlers::PutStart(const Caller& caller, proto::PutStartRequest& req,
                              proto::PutStartResponse* resp) const {
  const auto& limits = master_.config();
  if (auto s = CheckPutConfig(req.config(), options_.max_replicas, limits.max_key_length);
      !s.ok()) {
    return ToProto(s, resp->mutable_status());
  }
  const KeyScope scope(caller);
  master::PutConfig config = FromProto(req.config());
  if (!config.parent_key.empty()) config.parent_key = scope.Key(config.parent_key);
  auto grant = master_.PutStart(scope.Key(req.key()), req.size(), config, req.attempt());
  ToProto(scope.Shown(grant.status()), resp->mutable_status());
  if (grant.ok()) FillPut(*grant, resp, req.config().cache_capability_ms());
}

void MasterHandlers::PutEnd(const Caller& caller, proto::PutTokenRequest& req,
                            proto::StatusResponse* resp) const {
  const KeyScope scope(caller);
  ToProto(scope.Shown(master_.PutEnd(scope.Key(req.key()), req.token(), req.checksum())),
          resp->mutable_status());
}

void MasterHandlers::PutRevoke(const Caller& caller, proto::PutTokenRequest& req,
                               proto::StatusResponse* resp) const {
  const KeyScope scope(caller);
  ToProto(scope.Shown(master_.PutRevoke(scope.Key(req.key()), req.token())),
          resp->mutable_status());
}

void MasterHandlers::BatchPutStart(const Caller& caller, proto::BatchPutStartRequest& req,
                                   proto::BatchPutStartResponse* resp) const {
  Status s = CheckBatch(req.keys(), /*allow_empty=*/false);
  if (s.ok() && req.sizes_size() != req.keys_size()) {
    s = Status(ErrorCode::kInvalidArgument, std::to_string(req.keys_size()) + " keys but " +
                                                std::to_string(req.sizes_size()) + " sizes");
  }
  if (s.ok() && req.attempts_size() != 0 && req.attempts_size() != req.keys_size()) {
    s = Status(ErrorCode::kInvalidArgument, std::to_string(req.keys_size()) + " keys but " +
                                                std::to_string(req.attempts_size()) +
                                                " put attempts");
  }
  if (s.ok()) {
    s = CheckPutConfig(req.config(), options_.max_replicas, master_.config().max_key_length);
  }
  if (s.ok()) s = CheckReplicaReply("BatchPutStart", req.keys(), req.config().replica_count());
  if (!s.ok()) {
    return FailEverySlot(
        req.keys_size(), s, resp->mutable_results(),
        [](proto::PutStartResponse* r, const Status& st) { ToProto(st, r->mutable_status()); });
  }
  const KeyScope scope(caller);
  std::vector<std::string> keys = scope.TakeKeys(req.mutable_keys());
  std::vector<uint64_t> sizes(req.sizes().begin(), req.sizes().end());
  master::PutConfig config = FromProto(req.config());
  if (!config.parent_key.empty()) config.parent_key = scope.Key(config.parent_key);
  auto results = master_.BatchPutStart(keys, sizes, config, req.chain(),
                                       {req.attempts().data(), size_t(req.attempts_size())});
  for (const auto& r : results) {
    proto::PutStartResponse* out = resp->add_results();
    ToProto(scope.Shown(r.status()), out->mutable_status());
    if (r.ok()) FillPut(*r, out, req.config().cache_capability_ms());
  }
}

Status MasterHandlers::CheckTokens(const proto::BatchPutTokenRequest& req, bool end) const {
  Status s = CheckBatch(req.keys(), /*allow_empty=*/false);
  if (s.ok() && req.tokens_size() != req.keys_size()) {
    s = Status(ErrorCode::kInvalidArgument, std::to_string(req.keys_size()) + " keys but " +
                                                std::to_string(req.tokens_size()) + " put tokens");
  }
  if (s.ok() && end && req.checksums_size() != req.keys_size()) {
    s = Status(ErrorCode::kInvalidArgument, std::to_string(req.keys_size()) + " keys but " +
                                                std::to_string(req.checksums_size()) +
                                                " checksums");
  }
  return s;
}

void MasterHandlers::BatchPutEnd(const Caller& caller, proto::BatchPutTokenRequest& req,
                                 proto::StatusesResponse* resp) const {
  if (auto s = CheckTokens(req, /*end=*/true); !s.ok()) {
    return FailEverySlot(req.keys_size(), s, resp->mutable_statuses(), &FillStatusSlot);
  }
  const std::span<const uint64_t> tokens(req.tokens().data(), req.tokens().size());
  const std::span<const uint64_t> checksums(req.checksums().data(), req.checksums().size());
  const KeyScope scope(caller);
  FillStatuses(scope, master_.BatchPutEnd(scope.TakeKeys(req.mutable_keys()), tokens, checksums),
               resp);
}

void MasterHandlers::BatchPutRevoke(const Caller& caller, proto::BatchPutTokenRequest& req,
                                    proto::StatusesResponse* resp) const {
  if (auto s = CheckTokens(req, /*end=*/false); !s.ok()) {
    return FailEverySlot(req.keys_size(), s, resp->mutable_statuses(), &FillStatusSlot);
  }
  const std::span<const uint64_t> tokens(req.tokens().data(), req.tokens().size());
  const KeyScope scope(caller);
  FillStatuses(scope, master_.BatchPutRevoke(scope.TakeKeys(req.mutable_keys()), tokens), resp);
}

// ---- Reads ----

void MasterHandlers::GetReplicaList(const Caller& caller, proto::KeyRequest& req,
                                    proto::ReadResult* resp) const {
  const KeyScope scope(caller);
  auto read = master_.GetReplicaList(scope.Key(req.key()));
  if (!read.ok()) return ToProto(scope.Shown(read.status()), resp->mutable_status());
  FillRead(*read, resp);
}

void MasterHandlers::GetLongestPrefix(const Caller& caller, proto::KeyRequest& req,
                                      proto::LongestPrefixResponse* resp) const {
  const KeyScope scope(caller);
  auto match = master_.GetLongestPrefix(scope.Key(req.key()));
  if (!match.ok()) return ToProto(scope.Shown(match.status()), resp->mutable_status());
  resp->set_key(std::string(scope.Shown(match->key)));
  FillRead(match->read, resp->mutable_read());
  ToProto(Status::Ok(), resp->mutable_status());
}

void MasterHandlers::BatchGetReplicaList(const Caller& caller,
                                         proto::BatchGetReplicaListRequest& req,
                                         proto::BatchGetReplicaListResponse* resp) const {
  Status s = CheckBatch(req.keys(), /*allow_empty=*/false);
  if (s.ok()) s = CheckReplicaReply("BatchGetReplicaList", req.keys(), options_.max_replicas);
  if (!s.ok()) {
    return FailEverySlot(
        req.keys_size(), s, resp->mutable_results(),
        [](proto::ReadResult* r, const Status& st) { ToProto(st, r->mutable_status()); });
  }
  const KeyScope scope(caller);
  auto results = master_.BatchGetReplicaList(scope.TakeForPrefix(req.mutable_keys()),
                                             req.prefix_mode(), scope.prefix());
  for (const auto& r : results) {
    proto::ReadResult* out = resp->add_results();
    if (r.ok()) {
      FillRead(*r, out, req.cache_capability_ms());
    } else {
      ToProto(scope.Shown(r.status()), out->mutable_status());
    }
  }
}

void MasterHandlers::Exists(const Caller& caller, proto::KeyRequest& req,
                            proto::ExistsResponse* resp) const {
  const KeyScope scope(caller);
  auto exists = master_.Exists(scope.Key(req.key()));
  ToProto(scope.Shown(exists.status()), resp->mutable_status());
  if (exists.ok()) resp->set_exists(*exists);
}

void MasterHandlers::BatchExists(const Caller& caller, proto::KeysRequest& req,
                                 proto::BatchExistsResponse* resp) const {
  if (auto s = CheckBatch(req.keys(), /*allow_empty=*/false); !s.ok()) {
    return ToProto(s, resp->mutable_status());
  }
  const KeyScope scope(caller);
  master::BatchExistsResult r =
      master_.BatchExists(scope.TakeForPrefix(req.mutable_keys()), scope.prefix());
  ToProto(Status::Ok(), resp->mutable_status());
  for (bool present : r.present) resp->add_present(present);
  resp->set_leading(r.leading);
  for (const Status& s : r.statuses) ToProto(scope.Shown(s), resp->add_statuses());
}

void MasterHandlers::BatchQueryPrefix(const Caller& caller, proto::KeysRequest& req,
                                      proto::BatchQueryPrefixResponse* resp) const {
  if (auto s = CheckBatch(req.keys(), /*allow_empty=*/false); !s.ok()) {
    return ToProto(s, resp->mutable_status());
  }
  const KeyScope scope(caller);
  auto leading = master_.BatchQueryPrefix(scope.TakeForPrefix(req.mutable_keys()), scope.prefix());
  ToProto(scope.Shown(leading.status()), resp->mutable_status());
  if (leading.ok()) resp->set_leading(*leading);
}

void MasterHandlers::ReportCorruptReplica(const Caller& caller,
                                          proto::ReportCorruptReplicaRequest& req,
                                          proto::StatusResponse* resp) const {
  // A node reports the keys it stores, as stored; a client the keys it read.
  const KeyScope scope(caller);
  const bool node = caller.role == auth::Role::kNode;
  Status s = CheckCorruptReport(req, master_.config().max_key_length);
  if (s.ok()) {
    s = master_.ReportCorruptReplica(node ? req.key() : scope.Key(req.key()), req.segment(),
                                     req.offset(), req.checksum());
  }
  ToProto(scope.Shown(s), resp->mutable_status());
}

// ---- Remove and list ----

void MasterHandlers::Remove(const Caller& caller, proto::RemoveRequest& req,
                            proto::StatusResponse* resp) const {
  const KeyScope scope(caller);
  ToProto(scope.Shown(master_.Remove(scope.Key(req.key()), req.force())), resp->mutable_status());
}

void MasterHandlers::BatchRemove(const Caller& caller, proto::BatchRemoveRequest& req,
                                 proto::StatusesResponse* resp) const {
  if (auto s = CheckBatch(req.keys(), /*allow_empty=*/false); !s.ok()) {
    return FailEverySlot(req.keys_size(), s, resp->mutable_statuses(), &FillStatusSlot);
  }
  const KeyScope scope(caller);
  FillStatuses(scope, master_.BatchRemove(scope.TakeKeys(req.mutable_keys()), req.force()), resp);
}

void MasterHandlers::RemoveByPrefix(const Caller& caller, proto::RemoveByPrefixRequest& req,
                                    proto::CountResponse* resp) const {
  const KeyScope scope(caller);
  if (req.prefix().empty()) return RemoveAll(scope, req.force(), resp);
  if (master::IsTenantKey(req.prefix())) {
    return ToProto(Status(ErrorCode::kInvalidKey, "a prefix may not begin with the byte 0x1d"),
                   resp->mutable_status());
  }
  auto n = master_.RemoveByPrefix(scope.Key(req.prefix()), req.force());
  ToProto(scope.Shown(n.status()), resp->mutable_status());
  if (n.ok()) resp->set_count(*n);
}

void MasterHandlers::RemoveAll(const KeyScope& scope, bool force,
                               proto::CountResponse* resp) const {
  if (scope.whole_store()) {
    resp->set_count(master_.RemoveAll(force));
  } else if (scope.default_only()) {
    resp->set_count(master_.RemoveDefaultNamespace(force));
  } else {
    auto n = master_.RemoveByPrefix(scope.prefix(), force);
    if (!n.ok()) return ToProto(scope.Shown(n.status()), resp->mutable_status());
    resp->set_count(*n);
  }
  ToProto(Status::Ok(), resp->mutable_status());
}

void MasterHandlers::RemoveAll(const Caller& caller, proto::RemoveAllRequest& req,
                               proto::CountResponse* resp) const {
  RemoveAll(KeyScope(caller), req.force(), resp);
}

void MasterHandlers::List(const Caller& caller, proto::ListRequest& req,
                          proto::ListResponse* resp) const {
  if (req.prefix().size() > master_.config().max_key_length) {
    return ToProto(Status(ErrorCode::kInvalidKey, "prefix longer than the key limit"),
                   resp->mutable_status());
  }
  if (req.after().size() > master_.config().max_key_length) {
    return ToProto(Status(ErrorCode::kInvalidKey, "'after' longer than the key limit"),
                   resp->mutable_status());
  }
  // 0 and anything above the server's ceiling both mean "the ceiling": a reply
  // must stay bounded whatever the client asks for, in keys and in bytes (the
  // message limit, less room for the status).
  uint64_t limit =
      req.limit() == 0 ? options_.max_list : std::min<uint64_t>(req.limit(), options_.max_list);
  const uint64_t max_bytes =
      static_cast<uint64_t>(options_.max_message_bytes) - kReplyHeadroomBytes;
  // A tenant's list is its prefix's; a whole-store caller may page through
  // tenants' keys as List showed them (marks included), so only others'
  // prefixes and `after` are mapped.
  const KeyScope scope(caller);
  const std::string prefix = scope.whole_store() ? req.prefix() : scope.Key(req.prefix());
  std::string after = req.after();
  if (!after.empty() && !scope.whole_store()) after = scope.Key(after);
  bool truncated = false;
  std::vector<std::string> keys =
      master_.List(prefix, limit, max_bytes, &truncated, after, scope.default_only());
  resp->set_truncated(truncated);
  for (std::string& k : keys) {
    if (scope.prefix().empty()) {
      resp->add_keys(std::move(k));
    } else {
      resp->add_keys(std::string(scope.Shown(k)));
    }
  }
  ToProto(Status::Ok(), resp->mutable_status());
}

// ---- Session hints ----

void MasterHandlers::CountKeys(const Caller& caller, proto::KeysRequest& req,
                               proto::CountResponse* resp, KeysCall call) const {
  if (auto s = CheckBatch(req.keys(), /*allow_empty=*/false); !s.ok()) {
    return ToProto(s, resp->mutable_status());
  }
  const KeyScope scope(caller);
  auto n = (master_.*call)(scope.TakeForPrefix(req.mutable_keys()), scope.prefix());
  ToProto(scope.Shown(n.status()), resp->mutable_status());
  if (n.ok()) resp->set_count(*n);
}

void MasterHandlers::EndSession(const Caller& caller, proto::KeysRequest& req,
                                proto::CountResponse* resp) const {
  CountKeys(caller, req, resp, &master::MasterService::EndSession);
}

void MasterHandlers::TouchKeys(const Caller& caller, proto::KeysRequest& req,
                               proto::CountResponse* resp) const {
  CountKeys(caller, req, resp, &master::MasterService::TouchKeys);
}

// ---- Stats ----

void MasterHandlers::Stats(const Caller& caller, proto::Empty&, proto::StatsResponse* resp) const {
  master::MasterStats s = master_.Stats();
  resp->set_objects(s.objects);
  resp->set_pending_puts(s.pending_puts);
  resp->set_capacity_bytes(s.capacity_bytes);
  resp->set_used_bytes(s.used_bytes);
  resp->set_held_bytes(s.held_bytes);
  resp->set_largest_object(s.largest_object);
  resp->set_metadata_bytes(s.metadata_bytes);
  resp->set_admin_port(admin_port_.load(std::memory_order_relaxed));
  for (const master::SegmentInfo& info : master_.ListSegments()) {
    ToProto(info, resp->add_segments());
  }
  // Tenants' figures: all of them for a whole-store caller, a tenant's
  // client its own only, any other caller none.
  const bool all = KeyScope(caller).whole_store();
  const std::string mine =
      caller.tenant.empty() ? std::string() : "{tenant=\"" + caller.tenant + "\"}";
  for (const master::TenantStats& t : master_.TenantStatsSnapshot()) {
    if (!all && (caller.tenant.empty() || t.tenant != caller.tenant)) continue;
    proto::TenantUsage* out = resp->add_tenants();
    out->set_tenant(t.tenant);
    out->set_quota_bytes(t.quota_bytes);
    out->set_bytes(t.bytes);
    out->set_objects(t.objects);
    out->set_hits(t.hits);
    out->set_misses(t.misses);
    out->set_evictions(t.evictions);
  }
  if (options_.cluster_status) options_.cluster_status(resp->mutable_cluster());
  auto& counters = *resp->mutable_counters();
  for (const master::Sample& sample : master::CollectMasterSamples(master_)) {
    const bool tenants = sample.name.find("{tenant=\"") != std::string::npos;
    if (tenants && !all && (mine.empty() || !sample.name.ends_with(mine))) continue;
    counters[sample.name] = sample.value;
  }
  ToProto(Status::Ok(), resp->mutable_status());
}

// ---- Snapshot ----

void MasterHandlers::Snapshot(const Caller&, proto::Empty&, proto::SnapshotResponse* resp) const {
  if (!options_.request_snapshot) {
    ToProto(Status(ErrorCode::kUnsupported,
                   "this master keeps no snapshots (it was started without --data-dir)"),
            resp->mutable_status());
    return;
  }
  resp->set_snapshots_before(master_.counters().snapshots.load(std::memory_order_relaxed));
  options_.request_snapshot();
  ToProto(Status::Ok(), resp->mutable_status());
}

void MasterHandlers::ControlEndpoints(const Caller&, proto::Empty&,
                                      proto::ControlEndpointsResponse* resp) const {
  resp->set_port(control_.port);
  resp->set_unix_socket(control_.unix_socket);
  resp->set_instance(control_.instance);
  resp->set_liveness_port(control_.liveness_port);
  ToProto(Status::Ok(), resp->mutable_status());
}

// ---- ReadSnapshot ----

void MasterHandlers::ReadSnapshot(const Caller&, proto::ReadSnapshotRequest& req,
                                  proto::ReadSnapshotResponse* resp) const {
  if (!options_.read_snapshot) {
    ToProto(Status(ErrorCode::kUnsupported,
                   "this master keeps no snapshots (it was started without --data-dir)"),
            resp->mutable_status());
    return;
  }
  const uint32_t max = std::clamp<uint32_t>(req.max_bytes(), 1, kMaxSnapshotPartBytes);
  StatusOr<SnapshotPart> part = options_.read_snapshot(req.position(), req.offset(), max);
  if (!part.ok()) {
    ToProto(part.status(), resp->mutable_status());
    return;
  }
  resp->set_position(part->position);
  resp->set_file_bytes(part->file_bytes);
  resp->set_data(std::move(part->data));
  ToProto(Status::Ok(), resp->mutable_status());
}

}  // namespace crescent::rpc
