#include "etcd/etcd_client.h"

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "etcd/etcd_api.grpc.pb.h"

namespace crescent::etcd {
namespace {

using etcdserverpb::KV;
using etcdserverpb::Lease;
using etcdserverpb::Maintenance;

// What an etcd refusal means here. Unreachable() ones move to the next endpoint.
ErrorCode CodeOf(const grpc::Status& s) {
  switch (s.error_code()) {
    case grpc::StatusCode::DEADLINE_EXCEEDED: return ErrorCode::kTimeout;
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::CANCELLED:
    case grpc::StatusCode::ABORTED:
    case grpc::StatusCode::UNKNOWN: return ErrorCode::kUnavailable;
    case grpc::StatusCode::NOT_FOUND: return ErrorCode::kObjectNotFound;
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::OUT_OF_RANGE:
    case grpc::StatusCode::FAILED_PRECONDITION: return ErrorCode::kInvalidArgument;
    case grpc::StatusCode::RESOURCE_EXHAUSTED: return ErrorCode::kNoSpace;
    default: return ErrorCode::kInternal;
  }
}

bool Unreachable(const grpc::Status& s) {
  const ErrorCode c = CodeOf(s);
  return c == ErrorCode::kTimeout || c == ErrorCode::kUnavailable;
}

Status ToStatus(const grpc::Status& s, const std::string& endpoint) {
  return Status(CodeOf(s), "etcd at " + endpoint + ": " + s.error_message());
}

struct Endpoint {
  std::string target;
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<KV::Stub> kv;
  std::unique_ptr<Lease::Stub> lease;
  std::unique_ptr<etcdserverpb::Watch::Stub> watch;
  std::unique_ptr<Maintenance::Stub> maintenance;
};

}  // namespace

StatusOr<std::vector<std::string>> ParseEndpoints(std::string_view text) {
  std::vector<std::string> out;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    std::string_view one = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    if (one.starts_with("https://")) {
      return Status(ErrorCode::kInvalidArgument,
                    "etcd endpoint " + std::string(one) + ": TLS to etcd is not supported");
    }
    if (one.starts_with("http://")) one.remove_prefix(7);
    while (one.ends_with('/')) one.remove_suffix(1);
    const size_t colon = one.rfind(':');
    if (one.empty() || colon == std::string_view::npos || colon + 1 == one.size() ||
        one.find('/') != std::string_view::npos) {
      return Status(ErrorCode::kInvalidArgument,
                    "etcd endpoint '" + std::string(one) + "' is not HOST:PORT");
    }
    out.emplace_back(one);
  }
  if (out.empty()) return Status(ErrorCode::kInvalidArgument, "no etcd endpoint given");
  return out;
}

std::string PrefixEnd(std::string_view prefix) {
  std::string end(prefix);
  while (!end.empty()) {
    if (static_cast<uint8_t>(end.back()) < 0xff) {
      end.back() = static_cast<char>(static_cast<uint8_t>(end.back()) + 1);
      return end;
    }
    end.pop_back();
  }
  return std::string(1, '\0');
}

struct EtcdClient::Impl {
  EtcdOptions options;
  std::vector<Endpoint> endpoints;
  std::atomic<size_t> current{0};

  std::chrono::system_clock::time_point Deadline() const {
    return std::chrono::system_clock::now() + options.call_timeout;
  }

  // Runs `call(endpoint, ctx)` on the current endpoint; on an unreachable one
  // moves on, and with `retry` tries the others in turn within this call.
  template <typename Call>
  Status Do(bool retry, Call&& call) {
    const size_t n = endpoints.size();
    Status last(ErrorCode::kUnavailable, "no etcd endpoint");
    for (size_t i = 0; i < (retry ? n : 1); ++i) {
      size_t at = current.load(std::memory_order_acquire);
      grpc::ClientContext ctx;
      ctx.set_deadline(Deadline());
      const grpc::Status s = call(endpoints[at], ctx);
      if (s.ok()) return Status::Ok();
      last = ToStatus(s, endpoints[at].target);
      if (!Unreachable(s)) return last;
      current.compare_exchange_strong(at, (at + 1) % n, std::memory_order_acq_rel);
    }
    return last;
  }
};

StatusOr<std::unique_ptr<EtcdClient>> EtcdClient::Create(EtcdOptions options) {
  if (options.endpoints.empty()) {
    return Status(ErrorCode::kInvalidArgument, "no etcd endpoint given");
  }
  if (options.call_timeout.count() <= 0) {
    return Status(ErrorCode::kInvalidArgument, "the etcd call timeout must be above 0");
  }
  auto impl = std::make_unique<Impl>();
  for (const std::string& target : options.endpoints) {
    Endpoint e;
    e.target = target;
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(64 << 20);
    e.channel = grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
    e.kv = KV::NewStub(e.channel);
    e.lease = Lease::NewStub(e.channel);
    e.watch = etcdserverpb::Watch::NewStub(e.channel);
    e.maintenance = Maintenance::NewStub(e.channel);
    impl->endpoints.push_back(std::move(e));
  }
  impl->options = std::move(options);
  return std::unique_ptr<EtcdClient>(new EtcdClient(std::move(impl)));
}

EtcdClient::EtcdClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
EtcdClient::~EtcdClient() = default;

std::string EtcdClient::endpoint() const {
  return impl_->endpoints[impl_->current.load(std::memory_order_acquire)].target;
}

StatusOr<etcdserverpb::RangeResponse> EtcdClient::Range(const etcdserverpb::RangeRequest& req) {
  etcdserverpb::RangeResponse resp;
  Status s = impl_->Do(
      true, [&](Endpoint& e, grpc::ClientContext& ctx) { return e.kv->Range(&ctx, req, &resp); });
  if (!s.ok()) return s;
  return resp;
}

StatusOr<etcdserverpb::PutResponse> EtcdClient::Put(const etcdserverpb::PutRequest& req) {
  etcdserverpb::PutResponse resp;
  Status s = impl_->Do(
      false, [&](Endpoint& e, grpc::ClientContext& ctx) { return e.kv->Put(&ctx, req, &resp); });
  if (!s.ok()) return s;
  return resp;
}

StatusOr<etcdserverpb::DeleteRangeResponse> EtcdClient::DeleteRange(
    const etcdserverpb::DeleteRangeRequest& req) {
  etcdserverpb::DeleteRangeResponse resp;
  Status s = impl_->Do(false, [&](Endpoint& e, grpc::ClientContext& ctx) {
    return e.kv->DeleteRange(&ctx, req, &resp);
  });
  if (!s.ok()) return s;
  return resp;
}

StatusOr<etcdserverpb::TxnResponse> EtcdClient::Txn(const etcdserverpb::TxnRequest& req) {
  etcdserverpb::TxnResponse resp;
  Status s = impl_->Do(
      false, [&](Endpoint& e, grpc::ClientContext& ctx) { return e.kv->Txn(&ctx, req, &resp); });
  if (!s.ok()) return s;
  return resp;
}

Status EtcdClient::Compact(int64_t revision, bool physical) {
  etcdserverpb::CompactionRequest req;
  req.set_revision(revision);
  req.set_physical(physical);
  etcdserverpb::CompactionResponse resp;
  // Retried: compacting twice at one revision is refused as already done.
  return impl_->Do(true, [&](Endpoint& e, grpc::ClientContext& ctx) {
    return e.kv->Compact(&ctx, req, &resp);
  });
}

StatusOr<etcdserverpb::LeaseGrantResponse> EtcdClient::LeaseGrant(int64_t ttl_seconds) {
  etcdserverpb::LeaseGrantRequest req;
  req.set_ttl(ttl_seconds);
  etcdserverpb::LeaseGrantResponse resp;
  // Retried: a lease granted by a try whose answer was lost expires unused.
  Status s = impl_->Do(true, [&](Endpoint& e, grpc::ClientContext& ctx) {
    return e.lease->LeaseGrant(&ctx, req, &resp);
  });
  if (!s.ok()) return s;
  if (!resp.error().empty()) return Status(ErrorCode::kInternal, "etcd: " + resp.error());
  return resp;
}

Status EtcdClient::LeaseRevoke(int64_t id) {
  etcdserverpb::LeaseRevokeRequest req;
  req.set_id(id);
  etcdserverpb::LeaseRevokeResponse resp;
  return impl_->Do(true, [&](Endpoint& e, grpc::ClientContext& ctx) {
    return e.lease->LeaseRevoke(&ctx, req, &resp);
  });
}

StatusOr<int64_t> EtcdClient::KeepAliveOnce(int64_t id) {
  etcdserverpb::LeaseKeepAliveRequest req;
  req.set_id(id);
  etcdserverpb::LeaseKeepAliveResponse resp;
  Status s = impl_->Do(true, [&](Endpoint& e, grpc::ClientContext& ctx) {
    auto stream = e.lease->LeaseKeepAlive(&ctx);
    if (stream->Write(req)) stream->WritesDone();
    const bool got = stream->Read(&resp);
    grpc::Status done = stream->Finish();
    if (!done.ok()) return done;
    return got ? grpc::Status::OK
               : grpc::Status(grpc::StatusCode::UNAVAILABLE, "keep-alive stream closed");
  });
  if (!s.ok()) return s;
  return resp.ttl();
}

StatusOr<etcdserverpb::StatusResponse> EtcdClient::MemberStatus() {
  etcdserverpb::StatusResponse resp;
  Status s = impl_->Do(true, [&](Endpoint& e, grpc::ClientContext& ctx) {
    return e.maintenance->Status(&ctx, etcdserverpb::StatusRequest(), &resp);
  });
  if (!s.ok()) return s;
  return resp;
}

struct EtcdWatch::Impl {
  grpc::ClientContext ctx;
  std::unique_ptr<grpc::ClientReaderWriter<etcdserverpb::WatchRequest, etcdserverpb::WatchResponse>>
      stream;
  std::string target;
  std::mutex mu;  // guards below
  std::condition_variable arrived;
  std::deque<etcdserverpb::WatchResponse> queue;
  bool ended = false;
  std::string why;
  std::thread reader;

  void Read() {
    etcdserverpb::WatchResponse resp;
    while (stream->Read(&resp)) {
      std::lock_guard lock(mu);
      queue.push_back(std::move(resp));
      arrived.notify_all();
      resp = etcdserverpb::WatchResponse();
    }
    const grpc::Status s = stream->Finish();
    std::lock_guard lock(mu);
    ended = true;
    why = s.ok() ? "the watch stream ended" : ToStatus(s, target).message();
    arrived.notify_all();
  }
};

StatusOr<std::unique_ptr<EtcdWatch>> EtcdClient::Watch(
    const etcdserverpb::WatchCreateRequest& req) {
  etcdserverpb::WatchRequest create;
  *create.mutable_create_request() = req;
  Status last(ErrorCode::kUnavailable, "no etcd endpoint");
  for (size_t i = 0; i < impl_->endpoints.size(); ++i) {
    size_t at = impl_->current.load(std::memory_order_acquire);
    Endpoint& e = impl_->endpoints[at];
    auto w = std::make_unique<EtcdWatch::Impl>();
    w->target = e.target;
    w->stream = e.watch->Watch(&w->ctx);
    w->stream->Write(create);
    w->reader = std::thread([p = w.get()] { p->Read(); });
    auto watch = std::unique_ptr<EtcdWatch>(new EtcdWatch(std::move(w)));
    // The first answer says the watch exists; without one in time, the member
    // is unreachable or stalled: the next one is asked.
    StatusOr<etcdserverpb::WatchResponse> first =
        watch->Next(Clock::now() + impl_->options.call_timeout);
    if (first.ok() && first->created()) {
      if (first->canceled()) {
        return Status(ErrorCode::kInvalidArgument,
                      "etcd at " + e.target + " refused the watch: " + first->cancel_reason() +
                          (first->compact_revision() != 0
                               ? " (compacted up to revision " +
                                     std::to_string(first->compact_revision()) + ")"
                               : std::string()));
      }
      return watch;
    }
    last = first.ok() ? Status(ErrorCode::kInternal, "etcd answered a watch without creating it")
                      : first.status();
    impl_->current.compare_exchange_strong(at, (at + 1) % impl_->endpoints.size(),
                                           std::memory_order_acq_rel);
  }
  return last;
}

EtcdWatch::EtcdWatch(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

EtcdWatch::~EtcdWatch() { Cancel(); }

StatusOr<etcdserverpb::WatchResponse> EtcdWatch::Next(Clock::time_point deadline) {
  std::unique_lock lock(impl_->mu);
  impl_->arrived.wait_until(lock, deadline, [&] { return !impl_->queue.empty() || impl_->ended; });
  if (!impl_->queue.empty()) {
    etcdserverpb::WatchResponse resp = std::move(impl_->queue.front());
    impl_->queue.pop_front();
    return resp;
  }
  if (impl_->ended) return Status(ErrorCode::kUnavailable, impl_->why);
  return Status(ErrorCode::kTimeout, "no watch event from etcd at " + impl_->target + " in time");
}

void EtcdWatch::Cancel() {
  impl_->ctx.TryCancel();
  if (impl_->reader.joinable()) impl_->reader.join();
}

}  // namespace crescent::etcd
