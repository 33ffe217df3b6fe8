// The async transport of MasterServer. One completion queue per thread; every RPC
// is served by a generic Call<Req, Resp> that knows only how to wait for a request,
// run its handler (server_handlers.h) and send the reply.
//
// Every handled call is timed and its reply's error statuses counted
// (server_metrics.h); a refusal while draining counts as UNAVAILABLE.
//
// Lifecycle of a Call: constructed armed (waiting for a request on its queue); on a
// request it arms its successor, runs the handler inline and finishes; on the
// finish event it deletes itself. A request event with ok=false means the server is
// shutting down: the Call deletes itself without arming a successor.
//
// Shutdown order (why): stop the server (in-flight calls get `kShutdownGraceMs`,
// then are cancelled), wait until no handler is running so nobody touches a queue
// after it is shut, shut the queues, drain them (deleting every Call), join.
#include "rpc/master_server.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <filesystem>
#include <mutex>
#include <random>
#include <thread>
#include <type_traits>
#include <vector>

#include "common/listen_check.h"
#include "rpc/control_server.h"
#include "rpc/grpc_setup.h"
#include "rpc/master.grpc.pb.h"
#include "rpc/record_call.h"
#include "rpc/server_handlers.h"
#include "rpc/server_metrics.h"
#include "rpc/server_validation.h"

namespace crescent::rpc {
namespace {

constexpr int64_t kShutdownGraceMs = 2000;

class CallBase {
 public:
  virtual ~CallBase() = default;
  virtual void Proceed(bool ok) = 0;
};

// What every Call needs: the service to request on, the handlers, and the count of
// handlers running (Shutdown waits for it to reach zero before shutting queues).
struct CallEnv {
  Master::AsyncService* service;
  const MasterHandlers* handlers;
  std::atomic<int>* running;
  const std::atomic<bool>* draining;  // MasterServer::BeginDrain
  RpcServerMetrics* metrics;          // null: MasterServerOptions::record_metrics is off
};

// Which calls a draining server still serves: a store node's own (its unmount
// and heartbeats, while the node shuts down with it) and the read-only views.
enum class WhileDraining { kServe, kRefuse };

// Svc is the generated base class that declares RequestX (AsyncService derives
// from one per method), so the member pointer's class varies per RPC.
template <typename Svc, typename Req, typename Resp>
using RequestFn = void (Svc::*)(grpc::ServerContext*, Req*, grpc::ServerAsyncResponseWriter<Resp>*,
                                grpc::CompletionQueue*, grpc::ServerCompletionQueue*, void*);

template <typename Svc, typename Req, typename Resp>
class Call final : public CallBase {
 public:
  Call(const CallEnv& env, grpc::ServerCompletionQueue* cq, RpcMethod method,
       RequestFn<Svc, Req, Resp> request, HandlerFn<Req, Resp> handler, WhileDraining draining)
      : env_(env),
        cq_(cq),
        method_(method),
        request_(request),
        handler_(handler),
        while_draining_(draining),
        responder_(&ctx_) {
    (env_.service->*request_)(&ctx_, &req_, &responder_, cq_, cq_, this);
  }

  void Proceed(bool ok) override {
    if (finishing_ || !ok) {
      delete this;
      return;
    }
    env_.running->fetch_add(1, std::memory_order_acq_rel);
    // Serve the next request meanwhile.
    new Call(env_, cq_, method_, request_, handler_, while_draining_);
    finishing_ = true;
    if (while_draining_ == WhileDraining::kRefuse &&
        env_.draining->load(std::memory_order_acquire)) {
      // Retryable, so that clients wait for (or fail over to) the next master
      // instead of reading the teardown (segments gone, puts dropped) as an
      // answer.
      if (env_.metrics) env_.metrics->RecordError(method_, ErrorCode::kUnavailable);
      responder_.FinishWithError(
          grpc::Status(grpc::StatusCode::UNAVAILABLE, "the master is shutting down"), this);
    } else {
      RunRecorded(*env_.handlers, handler_, method_, req_, resp_, env_.metrics);
      responder_.Finish(resp_, grpc::Status::OK, this);
    }
    env_.running->fetch_sub(1, std::memory_order_acq_rel);
  }

 private:
  CallEnv env_;
  grpc::ServerCompletionQueue* cq_;
  RpcMethod method_;
  RequestFn<Svc, Req, Resp> request_;
  HandlerFn<Req, Resp> handler_;
  WhileDraining while_draining_;
  grpc::ServerContext ctx_;
  Req req_;
  Resp resp_;
  grpc::ServerAsyncResponseWriter<Resp> responder_;
  bool finishing_ = false;
};

template <typename Svc, typename Req, typename Resp>
void Arm(const CallEnv& env, grpc::ServerCompletionQueue* cq, RpcMethod method,
         RequestFn<Svc, Req, Resp> request, HandlerFn<Req, Resp> handler,
         WhileDraining draining = WhileDraining::kRefuse) {
  new Call<Svc, Req, Resp>(env, cq, method, request, handler, draining);
}

// One waiting Call per RPC on `cq`.
void ArmAll(const CallEnv& env, grpc::ServerCompletionQueue* cq) {
  using S = Master::AsyncService;
  using H = MasterHandlers;
  Arm(env, cq, RpcMethod::kMountSegment, &S::RequestMountSegment, &H::MountSegment);
  Arm(env, cq, RpcMethod::kUnmountSegment, &S::RequestUnmountSegment, &H::UnmountSegment,
      WhileDraining::kServe);
  Arm(env, cq, RpcMethod::kHeartbeat, &S::RequestHeartbeat, &H::Heartbeat, WhileDraining::kServe);
  Arm(env, cq, RpcMethod::kListSegments, &S::RequestListSegments, &H::ListSegments,
      WhileDraining::kServe);
  Arm(env, cq, RpcMethod::kReportUnreachable, &S::RequestReportUnreachable, &H::ReportUnreachable);
  Arm(env, cq, RpcMethod::kPutStart, &S::RequestPutStart, &H::PutStart);
  Arm(env, cq, RpcMethod::kPutEnd, &S::RequestPutEnd, &H::PutEnd);
  Arm(env, cq, RpcMethod::kPutRevoke, &S::RequestPutRevoke, &H::PutRevoke);
  Arm(env, cq, RpcMethod::kBatchPutStart, &S::RequestBatchPutStart, &H::BatchPutStart);
  Arm(env, cq, RpcMethod::kBatchPutEnd, &S::RequestBatchPutEnd, &H::BatchPutEnd);
  Arm(env, cq, RpcMethod::kBatchPutRevoke, &S::RequestBatchPutRevoke, &H::BatchPutRevoke);
  Arm(env, cq, RpcMethod::kGetReplicaList, &S::RequestGetReplicaList, &H::GetReplicaList);
  Arm(env, cq, RpcMethod::kBatchGetReplicaList, &S::RequestBatchGetReplicaList,
      &H::BatchGetReplicaList);
  Arm(env, cq, RpcMethod::kExists, &S::RequestExists, &H::Exists);
  Arm(env, cq, RpcMethod::kBatchExists, &S::RequestBatchExists, &H::BatchExists);
  Arm(env, cq, RpcMethod::kBatchQueryPrefix, &S::RequestBatchQueryPrefix, &H::BatchQueryPrefix);
  Arm(env, cq, RpcMethod::kReportCorruptReplica, &S::RequestReportCorruptReplica,
      &H::ReportCorruptReplica);
  Arm(env, cq, RpcMethod::kRemove, &S::RequestRemove, &H::Remove);
  Arm(env, cq, RpcMethod::kBatchRemove, &S::RequestBatchRemove, &H::BatchRemove);
  Arm(env, cq, RpcMethod::kRemoveByPrefix, &S::RequestRemoveByPrefix, &H::RemoveByPrefix);
  Arm(env, cq, RpcMethod::kRemoveAll, &S::RequestRemoveAll, &H::RemoveAll);
  Arm(env, cq, RpcMethod::kList, &S::RequestList, &H::List);
  Arm(env, cq, RpcMethod::kStats, &S::RequestStats, &H::Stats, WhileDraining::kServe);
  Arm(env, cq, RpcMethod::kSnapshot, &S::RequestSnapshot, &H::Snapshot);
  Arm(env, cq, RpcMethod::kControlEndpoints, &S::RequestControlEndpoints, &H::ControlEndpoints,
      WhileDraining::kServe);
}

// The host part of "HOST:PORT" or "[V6]:PORT", as an IP address for the lean
// protocol's listener (a name or an empty host: all addresses).
std::string HostOf(const std::string& address) {
  const size_t colon = address.rfind(':');
  std::string host = colon == std::string::npos ? address : address.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  if (host.empty() || host == "localhost") return host.empty() ? "0.0.0.0" : "127.0.0.1";
  return host;
}

uint64_t RandomInstance() {
  std::random_device rd;
  const uint64_t v = (uint64_t{rd()} << 32) ^ rd();
  return v != 0 ? v : 1;
}

}  // namespace

struct MasterServer::Impl {
  Impl(const MasterServerOptions& o, master::MasterService& master,
       const transfer::CapabilitySigner& signer)
      : options(o), handlers(options, master, signer) {}

  MasterServerOptions options;
  MasterHandlers handlers;  // refers to `options` above
  Master::AsyncService service;
  std::unique_ptr<grpc::Server> server;
  std::vector<std::unique_ptr<grpc::ServerCompletionQueue>> cqs;
  std::vector<std::thread> threads;
  std::atomic<int> running{0};
  std::atomic<bool> draining{false};
  RpcServerMetrics metrics;
  std::unique_ptr<ControlServer> control;  // the lean protocol; null: off
  int port = 0;
  std::mutex shutdown_mu;
  bool shut_down = false;
};

StatusOr<std::unique_ptr<MasterServer>> MasterServer::Start(
    const MasterServerOptions& options, master::MasterService& master,
    const transfer::CapabilitySigner& signer) {
  if (options.threads < 1) {
    return crescent::Status(ErrorCode::kInvalidArgument, "threads must be at least 1");
  }
  if (options.max_batch == 0 || options.max_list == 0 || options.max_replicas == 0 ||
      options.max_message_bytes <= static_cast<int>(kReplyHeadroomBytes)) {
    return crescent::Status(
        ErrorCode::kInvalidArgument,
        "max_batch, max_list and max_replicas must be > 0, max_message_bytes > " +
            std::to_string(kReplyHeadroomBytes));
  }
  // gRPC would only log why it cannot listen; ask first, to say it in the error.
  if (auto s = CheckCanListenOn("master server", options.listen_address); !s.ok()) return s;
  auto impl = std::make_unique<Impl>(options, master, signer);
  if (options.control_port >= 0) {
    ControlServerOptions co;
    co.host = HostOf(options.listen_address);
    co.port = options.control_port;
    co.unix_socket = options.control_socket;
    co.threads = options.threads;
    co.max_body = static_cast<uint32_t>(options.max_message_bytes);
    co.acks_wait_for_sync = options.acks_wait_for_sync;
    co.spin_us = options.control_spin_us;
    co.spin_max_us = options.control_spin_max_us;
    co.limits = options.limits;
    co.instance = RandomInstance();
    auto control = ControlServer::Start(
        co, impl->handlers, options.record_metrics ? &impl->metrics : nullptr, impl->draining);
    if (!control.ok()) return control.status();
    impl->control = std::move(control.value());
    impl->handlers.SetControlAdvert({impl->control->port(), co.unix_socket, co.instance});
  }

  PrepareGrpcProcess();

  grpc::ServerBuilder builder;
  builder.SetMaxReceiveMessageSize(options.max_message_bytes);
  builder.SetMaxSendMessageSize(options.max_message_bytes);
  // gRPC sets SO_REUSEPORT by default, which would let a second master bind the
  // same port and silently take half the connections.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  if (options.limits.idle_timeout.count() > 0) {
    builder.AddChannelArgument(
        GRPC_ARG_MAX_CONNECTION_IDLE_MS,
        static_cast<int>(std::min<int64_t>(options.limits.idle_timeout.count(), INT32_MAX)));
  }
  builder.AddListeningPort(options.listen_address, grpc::InsecureServerCredentials(), &impl->port);
  if (!options.unix_socket.empty()) {
    if (auto s = CheckUnixSocketPath("master server cannot listen on unix:" + options.unix_socket,
                                     options.unix_socket);
        !s.ok()) {
      return s;
    }
    if (auto s = RemoveStaleSocket(options.unix_socket); !s.ok()) return s;
    if (auto s = CheckCanListenUnix("master server", options.unix_socket); !s.ok()) return s;
    builder.AddListeningPort("unix:" + options.unix_socket, grpc::InsecureServerCredentials());
  }
  builder.RegisterService(&impl->service);
  for (int i = 0; i < options.threads; ++i) impl->cqs.push_back(builder.AddCompletionQueue());
  impl->server = builder.BuildAndStart();
  if (!impl->server || impl->port == 0) {
    if (impl->control) impl->control->Stop();
    if (impl->server) impl->server->Shutdown();
    for (auto& cq : impl->cqs) {
      cq->Shutdown();
      void* tag;
      bool ok;
      while (cq->Next(&tag, &ok)) {
      }
    }
    std::string where = options.listen_address;
    if (!options.unix_socket.empty()) where += " and unix:" + options.unix_socket;
    return crescent::Status(ErrorCode::kUnavailable, "master server cannot listen on " + where);
  }

  CallEnv env{&impl->service, &impl->handlers, &impl->running, &impl->draining,
              options.record_metrics ? &impl->metrics : nullptr};
  for (auto& cq : impl->cqs) {
    ArmAll(env, cq.get());
    impl->threads.emplace_back([cq = cq.get()] {
      void* tag;
      bool ok;
      while (cq->Next(&tag, &ok)) static_cast<CallBase*>(tag)->Proceed(ok);
    });
  }
  return std::unique_ptr<MasterServer>(new MasterServer(std::move(impl)));
}

MasterServer::MasterServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

MasterServer::~MasterServer() { Shutdown(); }

int MasterServer::port() const { return impl_->port; }

int MasterServer::control_port() const { return impl_->control ? impl_->control->port() : 0; }

const RpcServerMetrics& MasterServer::metrics() const { return impl_->metrics; }

void MasterServer::BeginDrain() { impl_->draining.store(true, std::memory_order_release); }

void MasterServer::Shutdown() {
  BeginDrain();
  std::lock_guard lock(impl_->shutdown_mu);
  if (impl_->shut_down) return;
  impl_->shut_down = true;
  impl_->server->Shutdown(std::chrono::system_clock::now() +
                          std::chrono::milliseconds(kShutdownGraceMs));
  // A handler that was running when the server stopped still calls Finish (and
  // may have armed a successor); both must happen before its queue shuts.
  while (impl_->running.load(std::memory_order_acquire) > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  for (auto& cq : impl_->cqs) cq->Shutdown();
  for (std::thread& t : impl_->threads) t.join();
  if (impl_->control) impl_->control->Stop();
  if (!impl_->options.unix_socket.empty()) {
    std::error_code ec;
    std::filesystem::remove(impl_->options.unix_socket, ec);
  }
}

}  // namespace crescent::rpc
