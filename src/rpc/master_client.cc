// MasterClient: every call goes through one retry loop (ControlRetry) over the
// lean protocol or gRPC (control_transport.h), by its row of the table of
// calls (calls::NAME). Impl's Call, Ask and PerKey are the plumbing, written
// once: the try and its retries, the engine's status in the reply, a batch in
// parts. Each method adds only what is its own: the request made of Crescent
// types, and the reading of the reply (conversions: convert.h and
// master_client_wire.h).
#include "rpc/master_client.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include "auth/token.h"
#include "common/listen_check.h"
#include "etcd/cluster_keys.h"
#include "rpc/batch_parts.h"
#include "rpc/control_channel.h"
#include "rpc/control_transport.h"
#include "rpc/convert.h"
#include "rpc/grpc_setup.h"
#include "rpc/grpc_transport.h"
#include "rpc/leader_transport.h"
#include "rpc/lean_transport.h"
#include "rpc/liveness_link.h"
#include "rpc/master_client_wire.h"
#include "rpc/master_route.h"

namespace crescent::rpc {
using namespace client_wire;  // NOLINT: this file is its one user
namespace {

constexpr const char* kDefaultMasterAddress = "127.0.0.1:50051";

// StatusOr<T> for a T, and a StatusOr as it is.
template <typename T>
struct StatusOrOf {
  using type = StatusOr<T>;
};
template <typename T>
struct StatusOrOf<StatusOr<T>> {
  using type = StatusOr<T>;
};
template <typename T>
using AsStatusOr = typename StatusOrOf<T>::type;

}  // namespace

std::string ResolveMasterAddress(const std::string& configured) {
  if (!configured.empty()) return configured;
  if (const char* env = std::getenv("CRESCENT_MASTER"); env != nullptr && *env != '\0') {
    return env;
  }
  return kDefaultMasterAddress;
}

struct MasterClient::Impl {
  MasterClientOptions options;
  std::string address;
  // Put attempts (PutStartRequest.attempt): a random base per client, then
  // distinct values from a counter. Sent with every try of one call, so a
  // retry after a lost reply gets that reply again instead of a conflict.
  const uint64_t attempt_base =
      std::random_device{}() * 0x9E3779B97F4A7C15ull ^ (uint64_t{std::random_device{}()} << 32);
  mutable std::atomic<uint64_t> attempts{0};
  uint64_t NextAttempt() const {
    // Multiplying by an odd constant is one-to-one, so a client does not
    // repeat a value within 2^64 puts; 0 means "none" and is never sent.
    const uint64_t v =
        attempt_base + attempts.fetch_add(1, std::memory_order_relaxed) * 0xD1B54A32D192ED03ull;
    return v != 0 ? v : 1;
  }
  // Every call goes through `retry`, over the route to one master (`fixed`),
  // or for an etcd:// address over `leader`, which follows the cluster's
  // leader (leader_transport.h).
  std::shared_ptr<MasterRoute> fixed;
  std::unique_ptr<LeaderTransport> leader;
  std::unique_ptr<ControlRetry> retry;

  // The route calls take now; null while a cluster has no leader known.
  std::shared_ptr<MasterRoute> Route() const { return leader ? leader->Current() : fixed; }

  // The plumbing of every call, written once; each method of MasterClient
  // adds only its request and the reading of its reply.

  // Sends `req` as `call` (through the retry loop): the reply, or why none came.
  template <typename Req, typename Resp>
  StatusOr<Resp> Call(const TypedCall<Req, Resp>& call, const std::type_identity_t<Req>& req,
                      const CallOptions& how = {}) const {
    Resp resp;
    if (Status s = retry->Invoke(call, req, &resp, how); !s.ok()) return s;
    return resp;
  }
  // Call, then the reply's own status (the engine's answer).
  template <typename Req, typename Resp>
  StatusOr<Resp> Ask(const TypedCall<Req, Resp>& call, const std::type_identity_t<Req>& req) const {
    StatusOr<Resp> resp = Call(call, req);
    if (!resp.ok()) return resp;
    if (Status s = FromProto(resp->status()); !s.ok()) return s;
    return resp;
  }
  // Ask, and `read` of the reply (a value, or a StatusOr of one).
  template <typename Req, typename Resp, typename Read>
  auto Ask(const TypedCall<Req, Resp>& call, const std::type_identity_t<Req>& req, Read read) const
      -> AsStatusOr<std::invoke_result_t<Read&, const Resp&>> {
    StatusOr<Resp> resp = Ask(call, req);
    if (!resp.ok()) return resp.status();
    return read(*resp);
  }

  // Learns where `route`'s master has its Liveness service (LivenessLink).
  void FindLiveness(MasterRoute* route) const {
    if (options.lean_control && !options.token.empty()) return;  // see Heartbeat
    if (!options.liveness || route == nullptr) return;
    proto::ControlEndpointsResponse where;
    const TryOutcome got = route->lean->Try(calls::ControlEndpoints.call, proto::Empty(), &where,
                                            options.rpc_timeout_ms, nullptr);
    if (got.status.ok()) route->liveness->Learn(where.liveness_port(), where.instance());
  }

  // The parts a batch over `keys` is sent in (batch_parts.h), for results of
  // up to `replicas` replicas each.
  std::vector<KeyRange> Parts(std::span<const std::string> keys, uint64_t replicas) const {
    return SplitBatch(keys, options.max_batch_keys,
                      static_cast<uint64_t>(options.max_message_bytes), replicas);
  }

  // A batch call with one result (a T) per key, sent in parts (Parts(keys,
  // replicas)): `build(at, part)` makes the request for the keys [at, at +
  // part.size()), and `read(reply, part, out)` appends the part's results to
  // `out` and says whether the batch goes on (a prefix may end early), or
  // why the reply does not fit the part. A part that fails gives its status
  // to its keys and all later ones. `meanwhile` runs during the first part.
  template <typename T, typename Req, typename Resp, typename Build, typename Read>
  std::vector<T> PerKey(const TypedCall<Req, Resp>& call, std::span<const std::string> keys,
                        uint64_t replicas, Build build, Read read,
                        const std::function<void()>* meanwhile = nullptr) const {
    std::vector<T> out;
    out.reserve(keys.size());
    for (const KeyRange r : Parts(keys, replicas)) {
      const std::span<const std::string> part = keys.subspan(r.begin, r.size());
      StatusOr<Resp> resp =
          Call(call, build(r.begin, part), {.meanwhile = r.begin == 0 ? meanwhile : nullptr});
      StatusOr<bool> more = resp.ok() ? read(*resp, part, out) : StatusOr<bool>(resp.status());
      if (!more.ok()) {
        out.resize(keys.size(), T(more.status()));
        break;
      }
      if (!*more) break;
    }
    return out;
  }
  // PerKey for a call answered by a StatusesResponse.
  template <typename Req, typename Build>
  std::vector<Status> Statuses(const TypedCall<Req, proto::StatusesResponse>& call,
                               std::span<const std::string> keys, Build build) const {
    return PerKey<Status>(call, keys, 0, build,
                          [](const proto::StatusesResponse& resp, std::span<const std::string> part,
                             std::vector<Status>& out) -> StatusOr<bool> {
                            for (Status& s : StatusesFromProto(resp, part.size())) {
                              out.push_back(std::move(s));
                            }
                            return true;
                          });
  }

  // A keys call answered with a count (CountResponse), in parts of at most
  // max_batch_keys; the counts summed over all parts.
  StatusOr<size_t> CountOverParts(const TypedCall<proto::KeysRequest, proto::CountResponse>& call,
                                  std::span<const std::string> keys) const;
};

StatusOr<std::unique_ptr<MasterClient>> MasterClient::Create(const MasterClientOptions& options) {
  if (options.attempts < 1 || options.rpc_timeout_ms <= 0 || options.backoff_initial_ms < 0 ||
      options.backoff_max_ms < options.backoff_initial_ms || options.max_message_bytes <= 0 ||
      options.max_batch_keys < 1) {
    return Status(ErrorCode::kInvalidArgument,
                  "client options: need attempts >= 1, rpc_timeout_ms > 0, "
                  "0 <= backoff_initial_ms <= backoff_max_ms, max_message_bytes > 0, "
                  "max_batch_keys >= 1");
  }
  std::optional<auth::Token> token;
  if (!options.token.empty()) {
    StatusOr<auth::Token> parsed = auth::ParseToken(options.token);
    if (!parsed.ok()) return parsed.status();
    if (!options.lean_control) {
      return Status(ErrorCode::kInvalidArgument,
                    "a token needs the lean control protocol (lean_control), the one transport "
                    "that authenticates");
    }
    token = std::move(*parsed);
  }
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->address = ResolveMasterAddress(options.address);
  const bool cluster = etcd::IsEtcdAddress(impl->address);
  if (!cluster) {
    if (auto s = CheckAddress(impl->address); !s.ok()) return s;
  }
  PrepareGrpcProcess();  // before the follower's etcd channels too
  std::unique_ptr<etcd::LeaderFollower> follower;
  if (cluster) {
    StatusOr<std::unique_ptr<etcd::LeaderFollower>> started =
        etcd::LeaderFollower::Start(impl->address);
    if (!started.ok()) return started.status();
    follower = std::move(*started);
  }
  StatusOr<RouteSettings> settings = MakeRouteSettings(options, impl->address, std::move(token));
  if (!settings.ok()) return settings.status();
  ControlTransport* transport = nullptr;
  if (cluster) {
    impl->leader = std::make_unique<LeaderTransport>(std::move(follower), std::move(*settings));
    transport = impl->leader.get();
  } else {
    StatusOr<std::shared_ptr<MasterRoute>> route = MakeMasterRoute(impl->address, *settings);
    if (!route.ok()) return route.status();
    impl->fixed = std::move(*route);
    transport = impl->fixed->lean.get();
  }
  impl->retry =
      std::make_unique<ControlRetry>(*transport, impl->address,
                                     RetryOptions{.attempts = options.attempts,
                                                  .rpc_timeout_ms = options.rpc_timeout_ms,
                                                  .backoff_initial_ms = options.backoff_initial_ms,
                                                  .backoff_max_ms = options.backoff_max_ms});
  return std::unique_ptr<MasterClient>(new MasterClient(std::move(impl)));
}

MasterClient::MasterClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
MasterClient::~MasterClient() = default;
const std::string& MasterClient::address() const { return impl_->address; }
std::vector<KeyRange> MasterClient::BatchParts(std::span<const std::string> keys,
                                               uint64_t replicas) const {
  return impl_->Parts(keys, replicas);
}

// ---- Segments ----

namespace {

// Why a mount's proof (master.proto, MountSegmentResponse) does not show the
// master's secret to be `check`'s, as words after "the master at ADDR"; empty
// when it does. Only the tag matters: the expiry is checked against the
// proof's own clock, so clock skew between the hosts cannot fail a mount.
std::string MountProofProblem(const proto::MountSegmentResponse& resp, const std::string& endpoint,
                              const transfer::CapabilitySigner& check) {
  if (resp.proof().tag().empty()) {
    return " sent no proof of its cluster secret (a master older than this store node?)";
  }
  auto proof = FromProto(resp.proof());
  Status s = proof.ok() ? check.Verify(endpoint, *proof, transfer::AccessOp::kRead,
                                       proof->expiry_unix_ms - 1)
                        : proof.status();
  if (s.ok() && (proof->segment != resp.segment_id() || proof->length != 0)) {
    s = Status(ErrorCode::kCapabilityInvalid, "the proof names another segment");
  }
  return s.ok() ? std::string()
                : " signs with another cluster secret than this node's (" + s.message() + ")";
}

}  // namespace

StatusOr<master::SegmentId> MasterClient::MountSegment(
    const master::SegmentSpec& spec, const transfer::CapabilitySigner* secret_check,
    const master::PreviousMount* previous, bool* adopted) {
  proto::MountSegmentRequest req;
  ToProto(spec, req.mutable_spec());
  if (previous != nullptr) {
    req.set_previous_endpoint(previous->endpoint);
    req.set_previous_owner_token(previous->owner_token);
    for (const master::MountIdentity& m : previous->earlier) {
      proto::EarlierMount* e = req.add_earlier_mounts();
      e->set_endpoint(m.endpoint);
      e->set_owner_token(m.owner_token);
    }
  }
  auto resp = impl_->Ask(calls::MountSegment, req);
  if (!resp.ok()) return resp.status();
  impl_->FindLiveness(impl_->Route().get());  // this node's heartbeats follow
  if (adopted != nullptr) *adopted = resp->adopted();
  if (secret_check == nullptr) return resp->segment_id();
  std::string refused = MountProofProblem(*resp, spec.endpoint, *secret_check);
  if (refused.empty()) return resp->segment_id();
  (void)UnmountSegment(spec.name, spec.owner_node, spec.owner_token);
  return Status(ErrorCode::kCapabilityInvalid, "the master at " + address() + refused +
                                                   "; segment " + spec.name + " unmounted again");
}

Status MasterClient::UnmountSegment(const std::string& name, const std::string& owner_node,
                                    uint64_t owner_token) {
  proto::UnmountSegmentRequest req;
  req.set_name(name);
  req.set_owner_node(owner_node);
  req.set_owner_token(owner_token);
  return impl_->Ask(calls::UnmountSegment, req).status();
}

Status MasterClient::Heartbeat(const std::string& node, MasterClockReading* clock) {
  if (clock != nullptr) *clock = {};
  auto read_clock = [&](const proto::HeartbeatResponse& resp) {
    if (clock != nullptr) {
      *clock = {resp.clock().unix_ms(), resp.clock().capability_grace_ms(),
                resp.clock().capability_lifetime_ms()};
    }
  };
  // The master's Liveness service when there is one (liveness_link.h); not
  // with a token, which gRPC does not carry: heartbeats then go over the
  // authenticated lean connection.
  // (A cluster's leader not known yet has none: Master.Heartbeat waits for it.)
  std::shared_ptr<MasterRoute> route = impl_->Route();
  if (impl_->options.token.empty() && route) {
    if (route->liveness->ShouldLook()) impl_->FindLiveness(route.get());
    proto::HeartbeatResponse answer;
    if (std::optional<Status> s =
            route->liveness->Heartbeat(node, impl_->options.rpc_timeout_ms, &answer)) {
      read_clock(answer);
      return *s;
    }
  }
  proto::HeartbeatRequest req;
  req.set_node(node);
  // One try: the node's heartbeat loop asks again in 100 ms while the master
  // is unreachable, and must not sit in this call's backoff when it is back.
  auto resp = impl_->Call(calls::Heartbeat, req, CallOptions::Tries(1));
  if (!resp.ok()) return resp.status();
  read_clock(*resp);
  return FromProto(resp->status());
}

StatusOr<std::vector<master::SegmentInfo>> MasterClient::ListSegments() {
  return impl_->Ask(calls::ListSegments, proto::Empty(), [](const proto::ListSegmentsResponse& r) {
    return SegmentsFromProto(r.segments());
  });
}

// ---- Puts ----

StatusOr<RemotePut> MasterClient::PutStart(const std::string& key, uint64_t size,
                                           const master::PutConfig& config) {
  proto::PutStartRequest req;
  req.set_key(key);
  req.set_size(size);
  ToProto(config, req.mutable_config());
  req.set_attempt(impl_->NextAttempt());
  return impl_->Ask(calls::PutStart, req, PutFromProto);
}

Status MasterClient::PutEnd(const std::string& key, uint64_t token, uint64_t checksum) {
  return impl_->Ask(calls::PutEnd, MakeToken(key, token, checksum)).status();
}

Status MasterClient::PutRevoke(const std::string& key, uint64_t token) {
  return impl_->Ask(calls::PutRevoke, MakeToken(key, token)).status();
}

std::vector<StatusOr<RemotePut>> MasterClient::BatchPutStart(std::span<const std::string> keys,
                                                             std::span<const uint64_t> sizes,
                                                             const master::PutConfig& config,
                                                             bool chain) {
  master::PutConfig part_config = config;
  auto build = [&](size_t at, std::span<const std::string> part) {
    proto::BatchPutStartRequest req;
    req.mutable_keys()->Assign(part.begin(), part.end());
    const std::span<const uint64_t> part_sizes = PartOf(sizes, keys.size(), at, part.size());
    req.mutable_sizes()->Assign(part_sizes.begin(), part_sizes.end());
    ToProto(part_config, req.mutable_config());
    req.set_chain(chain);
    for (size_t i = 0; i < part.size(); ++i) req.add_attempts(impl_->NextAttempt());
    return req;
  };
  auto read = [&](const proto::BatchPutStartResponse& resp, std::span<const std::string> part,
                  std::vector<StatusOr<RemotePut>>& out) -> StatusOr<bool> {
    if (static_cast<size_t>(resp.results_size()) != part.size()) {
      return ShortReply(resp.results_size(), part.size());
    }
    for (const proto::PutStartResponse& r : resp.results()) out.push_back(PutFromProto(r));
    // The next part's first page is linked to this part's last, as the master
    // links pages within one request; an invalid one (refused) links none.
    if (chain) {
      part_config.parent_key =
          out.back().status().code() == ErrorCode::kInvalidKey ? "" : part.back();
    }
    return true;
  };
  return impl_->PerKey<StatusOr<RemotePut>>(
      calls::BatchPutStart, keys, std::max<uint32_t>(config.replica_count, 1), build, read);
}

std::vector<Status> MasterClient::BatchPutEnd(std::span<const std::string> keys,
                                              std::span<const uint64_t> tokens,
                                              std::span<const uint64_t> checksums) {
  return impl_->Statuses(
      calls::BatchPutEnd, keys, [&](size_t at, std::span<const std::string> part) {
        proto::BatchPutTokenRequest req =
            MakeTokens(part, PartOf(tokens, keys.size(), at, part.size()));
        if (checksums.empty()) {
          req.mutable_checksums()->Resize(static_cast<int>(part.size()), 0);
        } else {
          const std::span<const uint64_t> mine = PartOf(checksums, keys.size(), at, part.size());
          req.mutable_checksums()->Assign(mine.begin(), mine.end());
        }
        return req;
      });
}

std::vector<Status> MasterClient::BatchPutRevoke(std::span<const std::string> keys,
                                                 std::span<const uint64_t> tokens) {
  return impl_->Statuses(calls::BatchPutRevoke, keys,
                         [&](size_t at, std::span<const std::string> part) {
                           return MakeTokens(part, PartOf(tokens, keys.size(), at, part.size()));
                         });
}

// ---- Reads ----

StatusOr<RemoteRead> MasterClient::GetReplicaList(const std::string& key) {
  proto::KeyRequest req;
  req.set_key(key);
  return impl_->Ask(calls::GetReplicaList, req, ReadFromProto);
}

std::vector<StatusOr<RemoteRead>> MasterClient::BatchGetReplicaList(
    std::span<const std::string> keys, bool prefix_mode, const std::function<void()>& meanwhile,
    uint32_t cache_capability_ms) {
  auto build = [&](size_t, std::span<const std::string> part) {
    proto::BatchGetReplicaListRequest req;
    req.mutable_keys()->Assign(part.begin(), part.end());
    req.set_prefix_mode(prefix_mode);
    req.set_cache_capability_ms(cache_capability_ms);
    return req;
  };
  auto read = [&](const proto::BatchGetReplicaListResponse& resp, std::span<const std::string> part,
                  std::vector<StatusOr<RemoteRead>>& out) -> StatusOr<bool> {
    // Prefix mode stops at the first unreadable key, so the reply may be shorter.
    const size_t got = resp.results_size();
    if (prefix_mode ? got > part.size() : got != part.size()) return ShortReply(got, part.size());
    for (const proto::ReadResult& r : resp.results()) out.push_back(ReadFromProto(r));
    // A prefix that ended in this part ends the whole prefix.
    return !(prefix_mode && (got < part.size() || !out.back().ok()));
  };
  return impl_->PerKey<StatusOr<RemoteRead>>(calls::BatchGetReplicaList, keys, kDefaultMaxReplicas,
                                             build, read, &meanwhile);
}

StatusOr<RemoteLongestPrefix> MasterClient::GetLongestPrefix(const std::string& key) {
  proto::KeyRequest req;
  req.set_key(key);
  return impl_->Ask(calls::GetLongestPrefix, req,
                    [](const proto::LongestPrefixResponse& r) -> StatusOr<RemoteLongestPrefix> {
                      StatusOr<RemoteRead> read = ReadFromProto(r.read());
                      if (!read.ok()) return read.status();
                      return RemoteLongestPrefix{r.key(), std::move(read).value()};
                    });
}

StatusOr<bool> MasterClient::Exists(const std::string& key) {
  proto::KeyRequest req;
  req.set_key(key);
  return impl_->Ask(calls::Exists, req, [](const proto::ExistsResponse& r) { return r.exists(); });
}

StatusOr<master::BatchExistsResult> MasterClient::BatchExists(std::span<const std::string> keys) {
  master::BatchExistsResult out;
  out.present.reserve(keys.size());
  bool leading = true;  // every key so far is present
  for (const KeyRange r : impl_->Parts(keys, 0)) {
    const size_t at = r.begin;
    const std::span<const std::string> part = keys.subspan(at, r.size());
    auto resp = impl_->Ask(calls::BatchExists, MakeKeys(part));
    if (!resp.ok()) return resp.status();
    const size_t got = resp->present_size();
    if (got != part.size()) return ShortReply(got, part.size());
    // out.statuses stays empty until a part refuses a key; from then on it
    // has one per key (OK for the keys answered).
    if (resp->statuses_size() != 0) {
      if (static_cast<size_t>(resp->statuses_size()) != got) {
        return ShortReply(resp->statuses_size(), got);
      }
      out.statuses.resize(at);
      for (const proto::Status& st : resp->statuses()) out.statuses.push_back(FromProto(st));
    } else if (!out.statuses.empty()) {
      out.statuses.resize(at + got);
    }
    out.present.insert(out.present.end(), resp->present().begin(), resp->present().end());
    if (leading) out.leading += resp->leading();
    leading = leading && resp->leading() == got;
  }
  return out;
}

StatusOr<size_t> MasterClient::BatchQueryPrefix(std::span<const std::string> keys) {
  size_t leading = 0;
  for (const KeyRange r : impl_->Parts(keys, 0)) {
    const size_t at = r.begin;
    const std::span<const std::string> part = keys.subspan(at, r.size());
    auto resp = impl_->Ask(calls::BatchQueryPrefix, MakeKeys(part));
    // A part that starts with an invalid key: the prefix ends there, and only
    // as the very first key is that an error.
    if (!resp.ok() && at > 0 && resp.status().code() == ErrorCode::kInvalidKey) return leading;
    if (!resp.ok()) return resp.status();
    leading += resp->leading();
    if (resp->leading() < part.size()) break;
  }
  return leading;
}

// ---- Integrity ----

Status MasterClient::ReportCorruptReplica(const std::string& key, uint32_t segment, uint64_t offset,
                                          uint64_t checksum) {
  proto::ReportCorruptReplicaRequest req;
  req.set_key(key);
  req.set_segment(segment);
  req.set_offset(offset);
  req.set_checksum(checksum);
  return impl_->Ask(calls::ReportCorruptReplica, req).status();
}

Status MasterClient::ReportUnreachable(std::span<const uint32_t> segments) {
  proto::ReportUnreachableRequest req;
  req.mutable_segments()->Assign(segments.begin(), segments.end());
  return impl_->Ask(calls::ReportUnreachable, req).status();
}

// ---- Remove and list ----

namespace {
size_t CountOf(const proto::CountResponse& r) { return static_cast<size_t>(r.count()); }
}  // namespace

Status MasterClient::Remove(const std::string& key, bool force) {
  proto::RemoveRequest req;
  req.set_key(key);
  req.set_force(force);
  return impl_->Ask(calls::Remove, req).status();
}

std::vector<Status> MasterClient::BatchRemove(std::span<const std::string> keys, bool force) {
  return impl_->Statuses(calls::BatchRemove, keys, [&](size_t, std::span<const std::string> part) {
    proto::BatchRemoveRequest req;
    req.mutable_keys()->Assign(part.begin(), part.end());
    req.set_force(force);
    return req;
  });
}

StatusOr<size_t> MasterClient::RemoveByPrefix(const std::string& prefix, bool force) {
  proto::RemoveByPrefixRequest req;
  req.set_prefix(prefix);
  req.set_force(force);
  return impl_->Ask(calls::RemoveByPrefix, req, CountOf);
}

StatusOr<size_t> MasterClient::RemoveAll(bool force) {
  proto::RemoveAllRequest req;
  req.set_force(force);
  return impl_->Ask(calls::RemoveAll, req, CountOf);
}

StatusOr<size_t> MasterClient::Impl::CountOverParts(
    const TypedCall<proto::KeysRequest, proto::CountResponse>& call,
    std::span<const std::string> keys) const {
  size_t total = 0;
  for (const KeyRange r : Parts(keys, 0)) {
    auto n = Ask(call, MakeKeys(keys.subspan(r.begin, r.size())), CountOf);
    if (!n.ok()) return n.status();
    total += *n;
  }
  return total;
}

StatusOr<size_t> MasterClient::EndSession(std::span<const std::string> keys) {
  return impl_->CountOverParts(calls::EndSession, keys);
}

StatusOr<size_t> MasterClient::TouchKeys(std::span<const std::string> keys) {
  return impl_->CountOverParts(calls::TouchKeys, keys);
}

StatusOr<std::vector<std::string>> MasterClient::List(const std::string& prefix, size_t limit,
                                                      bool* truncated, const std::string& after) {
  // Asking for one key more tells a cut at `limit` apart from an exact fit on
  // masters that predate ListResponse.truncated too; the flag adds the cut at
  // the master's own cap (and at any limit with `limit` 0).
  const bool probe = truncated != nullptr && limit > 0 && limit < SIZE_MAX;
  proto::ListRequest req;
  req.set_prefix(prefix);
  req.set_limit(probe ? limit + 1 : limit);
  req.set_after(after);
  return impl_->Ask(calls::List, req, [&](const proto::ListResponse& resp) {
    std::vector<std::string> keys(resp.keys().begin(), resp.keys().end());
    bool cut = resp.truncated();
    if (probe && keys.size() > limit) {
      keys.resize(limit);
      cut = true;
    }
    if (truncated != nullptr) *truncated = cut;
    return keys;
  });
}

void MasterClient::OnLeaderChange(std::function<void()> fn) {
  if (impl_->leader) impl_->leader->OnChange(std::move(fn));
}

StatusOr<uint64_t> MasterClient::RequestSnapshot() {
  return impl_->Ask(calls::Snapshot, proto::Empty(),
                    [](const proto::SnapshotResponse& r) { return r.snapshots_before(); });
}

StatusOr<SnapshotPart> MasterClient::ReadSnapshot(uint64_t position, uint64_t offset,
                                                  uint32_t max_bytes) {
  proto::ReadSnapshotRequest req;
  req.set_position(position);
  req.set_offset(offset);
  req.set_max_bytes(max_bytes);
  StatusOr<proto::ReadSnapshotResponse> r = impl_->Ask(calls::ReadSnapshot, req);
  if (!r.ok()) return r.status();
  return SnapshotPart{r->position(), r->file_bytes(), std::move(*r->mutable_data())};
}

std::string MasterClient::ControlTarget() {
  std::shared_ptr<MasterRoute> route = impl_->Route();
  if (!route && impl_->leader) {
    StatusOr<std::shared_ptr<MasterRoute>> now =
        impl_->leader->Route(impl_->options.rpc_timeout_ms);
    if (now.ok()) route = std::move(*now);
  }
  std::shared_ptr<ControlChannel> channel = route ? route->lean->Channel() : nullptr;
  return channel ? channel->target() : std::string();
}

namespace {
ClusterStats StatsFromProto(const proto::StatsResponse& resp) {
  ClusterStats out;
  out.objects = resp.objects();
  out.pending_puts = resp.pending_puts();
  out.capacity_bytes = resp.capacity_bytes();
  out.used_bytes = resp.used_bytes();
  out.held_bytes = resp.held_bytes();
  out.metadata_bytes = resp.metadata_bytes();
  out.largest_object = resp.largest_object();
  out.admin_port = resp.admin_port();
  out.segments = SegmentsFromProto(resp.segments());
  out.counters.insert(resp.counters().begin(), resp.counters().end());
  for (const proto::TenantUsage& t : resp.tenants()) {
    out.tenants.push_back(
        {t.tenant(), t.quota_bytes(), t.bytes(), t.objects(), t.hits(), t.misses(), t.evictions()});
  }
  if (resp.has_cluster()) {
    const proto::ClusterStatus& c = resp.cluster();
    out.masters = {c.name(), c.etcd(), c.self_id(), c.leader_id(), c.leader_changes(), {}};
    for (const proto::ClusterMember& m : c.members()) {
      out.masters.members.push_back({m.master_id(), m.grpc(), m.leader(), m.applied_records(),
                                     m.lag_records(), m.lag_seconds()});
    }
  }
  return out;
}
}  // namespace

StatusOr<ClusterStats> MasterClient::Stats() {
  return impl_->Ask(calls::Stats, proto::Empty(), StatsFromProto);
}

}  // namespace crescent::rpc
