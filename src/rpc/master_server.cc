// The async transport of MasterServer. One completion queue per thread; every RPC
// is served by a generic Call<Req, Resp> that knows only how to wait for a request,
// run its handler (server_handlers.h) and send the reply.
//
// Heartbeats have a grpc::Server of their own (the Liveness service): with
// gRPC's poll poller (grpc_setup.h) a connection is read only by the threads
// of the queue that accepted it, so a queue of its own on the same server
// would not do: a node's connection may belong to a thread stuck in a slow
// handler (a demotion's copy, a take-over, a key-index build). Its own port
// gives the heartbeats their own connections, read by their own thread.
//
// Every handled call is timed and its reply's error statuses counted
// (server_metrics.h); a refusal while draining counts as UNAVAILABLE.
//
// Lifecycle of a Call: constructed armed (waiting for a request on its queue); on a
// request it arms its successor, runs the handler inline and finishes; on the
// finish event it deletes itself. A request event with ok=false means the server is
// shutting down: the Call deletes itself without arming a successor.
//
// Shutdown order (why): stop both servers (in-flight calls get `kShutdownGraceMs`,
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
#include "rpc/grpc_auth.h"
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

// What every Call needs: the handlers, and the count of handlers running
// (Shutdown waits for it to reach zero before shutting queues).
struct CallEnv {
  const MasterHandlers* handlers;
  std::atomic<int>* running;
  const DrainState* draining;         // MasterServer::BeginDrain
  RpcServerMetrics* metrics;          // null: MasterServerOptions::record_metrics is off
  // Who each call comes from (grpc_auth.h): with credentials, every call but
  // those ServedWithoutToken proves a token, or is refused.
  const GrpcAuth* auth;
};

// Which calls a draining server still serves (control_methods.h).
enum class WhileDraining { kServe, kRefuse };
WhileDraining WhileDrainingOf(RpcMethod m) {
  return ServedWhileDraining(m) ? WhileDraining::kServe : WhileDraining::kRefuse;
}

// Svc is the generated base class that declares RequestX (AsyncService derives
// from one per method), so the member pointer's class varies per RPC.
template <typename Svc, typename Req, typename Resp>
using RequestFn = void (Svc::*)(grpc::ServerContext*, Req*, grpc::ServerAsyncResponseWriter<Resp>*,
                                grpc::CompletionQueue*, grpc::ServerCompletionQueue*, void*);

template <typename Svc, typename Req, typename Resp>
class Call final : public CallBase {
 public:
  Call(const CallEnv& env, Svc* service, grpc::ServerCompletionQueue* cq, RpcMethod method,
       RequestFn<Svc, Req, Resp> request, HandlerFn<Req, Resp> handler, WhileDraining draining)
      : env_(env),
        service_(service),
        cq_(cq),
        method_(method),
        request_(request),
        handler_(handler),
        while_draining_(draining),
        responder_(&ctx_) {
    (service_->*request_)(&ctx_, &req_, &responder_, cq_, cq_, this);
  }

  void Proceed(bool ok) override {
    if (finishing_ || !ok) {
      delete this;
      return;
    }
    env_.running->fetch_add(1, std::memory_order_acq_rel);
    // Serve the next request meanwhile.
    new Call(env_, service_, cq_, method_, request_, handler_, while_draining_);
    finishing_ = true;
    StatusOr<Caller> caller = Unchecked();
    if (env_.auth->on() && !ServedWithoutToken(method_)) caller = env_.auth->Verify(ctx_);
    const Status refused = caller.ok() ? CheckRole(*caller, method_) : caller.status();
    if (!refused.ok()) {
      if (env_.metrics) {
        env_.metrics->RecordError(method_, refused.code());
        if (refused.code() == ErrorCode::kUnauthenticated) {
          env_.metrics->RecordAuthentication(RpcServerMetrics::AuthResult::kRefused);
        }
      }
      responder_.FinishWithError(grpc::Status(refused.code() == ErrorCode::kPermissionDenied
                                                  ? grpc::StatusCode::PERMISSION_DENIED
                                                  : grpc::StatusCode::UNAUTHENTICATED,
                                              refused.message()),
                                 this);
    } else if (while_draining_ == WhileDraining::kRefuse && env_.draining->on()) {
      // Retryable, so that clients wait for (or fail over to) the next master
      // instead of reading the teardown (segments gone, puts dropped) as an
      // answer.
      if (env_.metrics) env_.metrics->RecordError(method_, ErrorCode::kUnavailable);
      responder_.FinishWithError(grpc::Status(grpc::StatusCode::UNAVAILABLE, env_.draining->why()),
                                 this);
    } else {
      RunRecorded(*env_.handlers, handler_, method_, *caller, req_, resp_, env_.metrics);
      responder_.Finish(resp_, grpc::Status::OK, this);
    }
    env_.running->fetch_sub(1, std::memory_order_acq_rel);
  }

 private:
  CallEnv env_;
  Svc* service_;
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

// `service` is the AsyncService whose generated base Svc declares `request`.
template <typename Service, typename Svc, typename Req, typename Resp>
void Arm(const CallEnv& env, Service* service, grpc::ServerCompletionQueue* cq, RpcMethod method,
         RequestFn<Svc, Req, Resp> request, HandlerFn<Req, Resp> handler) {
  new Call<Svc, Req, Resp>(env, service, cq, method, request, handler, WhileDrainingOf(method));
}

// One waiting Call per RPC of the Master service on `cq` (the table of
// control_methods.h), each answered by the handler of its name.
void ArmAll(const CallEnv& env, Master::AsyncService* service, grpc::ServerCompletionQueue* cq) {
  using S = Master::AsyncService;
#define CRESCENT_ARM(name, Req, Resp, lean) \
  Arm(env, service, cq, RpcMethod::k##name, &S::Request##name, &MasterHandlers::name);
  CRESCENT_CONTROL_CALLS(CRESCENT_ARM)
#undef CRESCENT_ARM
}

// The Liveness service's one RPC on `cq`.
void ArmLiveness(const CallEnv& env, Liveness::AsyncService* service,
                 grpc::ServerCompletionQueue* cq) {
  Arm(env, service, cq, RpcMethod::kHeartbeat, &Liveness::AsyncService::RequestHeartbeat,
      &MasterHandlers::Heartbeat);
}

// Serves `cq` until it is shut down and drained.
void Drain(grpc::ServerCompletionQueue* cq) {
  void* tag;
  bool ok;
  while (cq->Next(&tag, &ok)) static_cast<CallBase*>(tag)->Proceed(ok);
}

// The host part of "HOST:PORT" or "[V6]:PORT", as an IP address for the lean
// protocol's and the Liveness service's listeners (a name or an empty host:
// all addresses).
std::string HostOf(const std::string& address) {
  const size_t colon = address.rfind(':');
  std::string host = colon == std::string::npos ? address : address.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  if (host.empty() || host == "localhost") return host.empty() ? "0.0.0.0" : "127.0.0.1";
  return host;
}

// HOST:PORT, with brackets for an IPv6 host.
std::string JoinHostPort(const std::string& host, int port) {
  const std::string h = host.find(':') == std::string::npos ? host : "[" + host + "]";
  return h + ":" + std::to_string(port);
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
  // The Liveness service's server (null: off), and its port.
  Liveness::AsyncService liveness_service;
  std::unique_ptr<grpc::Server> liveness;
  int liveness_port = 0;
  // Every queue and its thread: one per options.threads, then the Liveness one.
  std::vector<std::unique_ptr<grpc::ServerCompletionQueue>> cqs;
  std::vector<std::thread> threads;
  std::atomic<int> running{0};
  DrainState draining;
  GrpcAuth auth;  // who gRPC calls come from
  RpcServerMetrics metrics;
  std::unique_ptr<ControlServer> control;  // the lean protocol; null: off
  int port = 0;
  std::mutex shutdown_mu;
  bool shut_down = false;
};

namespace {

// gRPC's credentials for the TCP ports: TLS with a certificate, requiring a
// client certificate signed by the CA when there is one; plain without.
std::shared_ptr<grpc::ServerCredentials> TcpCredentials(const TlsPem& pem) {
  if (pem.cert.empty()) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions ssl(
      pem.ca.empty() ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                     : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  ssl.pem_root_certs = pem.ca;
  ssl.pem_key_cert_pairs.push_back({pem.key, pem.cert});
  return grpc::SslServerCredentials(ssl);
}

}  // namespace

StatusOr<std::unique_ptr<MasterServer>> MasterServer::Start(
    const MasterServerOptions& options, master::MasterService& master,
    const transfer::CapabilitySigner& signer) {
  if (options.threads < 1) {
    return Status(ErrorCode::kInvalidArgument, "threads must be at least 1");
  }
  if (options.max_batch == 0 || options.max_list == 0 || options.max_replicas == 0 ||
      options.max_message_bytes <= static_cast<int>(kReplyHeadroomBytes)) {
    return Status(ErrorCode::kInvalidArgument,
                  "max_batch, max_list and max_replicas must be > 0, max_message_bytes > " +
                      std::to_string(kReplyHeadroomBytes));
  }
  // gRPC would only log why it cannot listen; ask first, to say it in the error.
  if (auto s = CheckCanListenOn("master server", options.listen_address); !s.ok()) return s;
  if (options.credentials && options.control_port < 0) {
    return Status(ErrorCode::kInvalidArgument,
                  "an auth file needs the lean control protocol (--control-port), the one "
                  "transport that authenticates clients");
  }
  StatusOr<TlsPem> tls = LoadServerTls(options.tls);
  if (!tls.ok()) return tls.status();
  const std::shared_ptr<grpc::ServerCredentials> tcp_credentials = TcpCredentials(*tls);
  auto impl = std::make_unique<Impl>(options, master, signer);
  impl->auth.Set(options.credentials);
  MasterHandlers::ControlAdvert advert;
  advert.instance = RandomInstance();
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
    co.instance = advert.instance;
    co.credentials = options.credentials;
    co.tls = *tls;
    auto control = ControlServer::Start(
        co, impl->handlers, options.record_metrics ? &impl->metrics : nullptr, impl->draining);
    if (!control.ok()) return control.status();
    impl->control = std::move(control.value());
    advert.port = impl->control->port();
    advert.unix_socket = co.unix_socket;
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
  builder.AddListeningPort(options.listen_address, tcp_credentials, &impl->port);
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
  // Undoes a start that failed: nothing has been armed on the queues yet.
  const auto abandon = [&impl](std::string why) {
    if (impl->control) impl->control->Stop();
    if (impl->server) impl->server->Shutdown();
    if (impl->liveness) impl->liveness->Shutdown();
    for (auto& cq : impl->cqs) {
      cq->Shutdown();
      void* tag;
      bool ok;
      while (cq->Next(&tag, &ok)) {
      }
    }
    return Status(ErrorCode::kUnavailable, std::move(why));
  };
  if (!impl->server || impl->port == 0) {
    std::string where = options.listen_address;
    if (!options.unix_socket.empty()) where += " and unix:" + options.unix_socket;
    return abandon("master server cannot listen on " + where);
  }
  if (options.liveness_port >= 0) {
    const std::string where = JoinHostPort(HostOf(options.listen_address), options.liveness_port);
    grpc::ServerBuilder live;
    live.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
    live.AddListeningPort(where, tcp_credentials, &impl->liveness_port);
    live.RegisterService(&impl->liveness_service);
    impl->cqs.push_back(live.AddCompletionQueue());
    impl->liveness = live.BuildAndStart();
    if (!impl->liveness || impl->liveness_port == 0) {
      return abandon("master server cannot listen for heartbeats (--liveness-port) on " + where);
    }
    advert.liveness_port = static_cast<uint32_t>(impl->liveness_port);
  }
  impl->handlers.SetControlAdvert(advert);

  CallEnv env{&impl->handlers, &impl->running, &impl->draining,
              options.record_metrics ? &impl->metrics : nullptr, &impl->auth};
  for (size_t i = 0; i < impl->cqs.size(); ++i) {
    grpc::ServerCompletionQueue* cq = impl->cqs[i].get();
    if (i < static_cast<size_t>(options.threads)) {
      ArmAll(env, &impl->service, cq);
    } else {
      ArmLiveness(env, &impl->liveness_service, cq);
    }
    impl->threads.emplace_back([cq] { Drain(cq); });
  }
  return std::unique_ptr<MasterServer>(new MasterServer(std::move(impl)));
}

MasterServer::MasterServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

MasterServer::~MasterServer() { Shutdown(); }

int MasterServer::port() const { return impl_->port; }

int MasterServer::control_port() const { return impl_->control ? impl_->control->port() : 0; }

void MasterServer::SetCredentials(std::shared_ptr<const auth::ServerCredentials> credentials) {
  impl_->auth.Set(credentials);
  if (impl_->control) impl_->control->SetCredentials(std::move(credentials));
}

int MasterServer::liveness_port() const { return impl_->liveness ? impl_->liveness_port : 0; }

void MasterServer::SetAdminPort(int port) {
  impl_->handlers.SetAdminPort(static_cast<uint32_t>(port));
}

const RpcServerMetrics& MasterServer::metrics() const { return impl_->metrics; }

void MasterServer::BeginDrain(std::string why) { impl_->draining.Begin(std::move(why)); }

void MasterServer::Shutdown() {
  BeginDrain();
  std::lock_guard lock(impl_->shutdown_mu);
  if (impl_->shut_down) return;
  impl_->shut_down = true;
  const auto grace = std::chrono::system_clock::now() + std::chrono::milliseconds(kShutdownGraceMs);
  impl_->server->Shutdown(grace);
  if (impl_->liveness) impl_->liveness->Shutdown(grace);
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
