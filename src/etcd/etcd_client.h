// EtcdClient: Crescent's client of etcd's v3 gRPC API (etcd_api.proto), for
// the masters to elect a leader and share state through. It speaks to a list of
// endpoints, one at a time: each call has its own deadline (a stalled etcd
// member still accepts connections and would otherwise hang a call), and a call
// that meets an unreachable or stalled member moves the client to the next
// endpoint. Reads are retried there within the call; a write is not (its
// outcome is unknown: it may have been applied), and its caller decides.
//
// Thread-safe; a Watch is used by one thread at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "crescent/status.h"
#include "etcd/etcd_api.pb.h"

namespace crescent::etcd {

using Clock = std::chrono::steady_clock;

// "http://H1:2379,http://H2:2379" (or H:PORT without the scheme) as gRPC
// targets ("H1:2379"); INVALID_ARGUMENT for an empty list, an https:// URL
// (TLS to etcd is not built), or an entry without a port.
StatusOr<std::vector<std::string>> ParseEndpoints(std::string_view text);

struct EtcdOptions {
  std::vector<std::string> endpoints;            // gRPC targets, H:PORT
  std::chrono::milliseconds call_timeout{1000};  // each try of each call
};

class EtcdWatch;

class EtcdClient {
 public:
  // Connects lazily: INVALID_ARGUMENT only for options that cannot work.
  static StatusOr<std::unique_ptr<EtcdClient>> Create(EtcdOptions options);
  ~EtcdClient();

  StatusOr<etcdserverpb::RangeResponse> Range(const etcdserverpb::RangeRequest& req);
  StatusOr<etcdserverpb::PutResponse> Put(const etcdserverpb::PutRequest& req);
  StatusOr<etcdserverpb::DeleteRangeResponse> DeleteRange(
      const etcdserverpb::DeleteRangeRequest& req);
  StatusOr<etcdserverpb::TxnResponse> Txn(const etcdserverpb::TxnRequest& req);
  // Drops the history before `revision` (and, with `physical`, answers once
  // the backend freed it); watches and ranges from before it fail from then on.
  Status Compact(int64_t revision, bool physical);
  // A lease of at least `ttl_seconds` (etcd raises a TTL below its minimum,
  // 2 s by default: read the granted one in the reply).
  StatusOr<etcdserverpb::LeaseGrantResponse> LeaseGrant(int64_t ttl_seconds);
  Status LeaseRevoke(int64_t id);
  // One keep-alive of lease `id`: the seconds it has left, 0 when it is gone.
  StatusOr<int64_t> KeepAliveOnce(int64_t id);
  // The endpoint's own view (version, leader, raft term).
  StatusOr<etcdserverpb::StatusResponse> MemberStatus();
  // A watch from `req` on the current endpoint; UNAVAILABLE when none answers.
  StatusOr<std::unique_ptr<EtcdWatch>> Watch(const etcdserverpb::WatchCreateRequest& req);

  // The endpoint calls go to now.
  std::string endpoint() const;

 private:
  struct Impl;
  explicit EtcdClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// A watch stream. Its responses arrive on a thread of its own; Next takes them
// in order.
class EtcdWatch {
 public:
  ~EtcdWatch();  // Cancel()s
  // The next response, or TIMEOUT at `deadline`; UNAVAILABLE once the stream
  // ended (etcd went away, or the watch was cancelled), saying why.
  StatusOr<etcdserverpb::WatchResponse> Next(Clock::time_point deadline);
  // Ends the stream; Next then answers UNAVAILABLE. Idempotent.
  void Cancel();

 private:
  friend class EtcdClient;
  struct Impl;
  explicit EtcdWatch(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The range_end that makes a Range, DeleteRange or watch cover every key that
// starts with `prefix` (the prefix with its last byte below 0xff raised by
// one; "\0" for an empty prefix or one of only 0xff bytes: every key).
std::string PrefixEnd(std::string_view prefix);

}  // namespace crescent::etcd
