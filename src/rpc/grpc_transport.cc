#include "rpc/grpc_transport.h"

#include <chrono>
#include <utility>

#include "rpc/master_client_wire.h"

namespace crescent::rpc {
namespace {

// A queue must be shut down and emptied before it is destroyed.
void Retire(std::unique_ptr<grpc::CompletionQueue> cq) {
  cq->Shutdown();
  void* tag;
  bool ok;
  while (cq->Next(&tag, &ok)) {
  }
}

}  // namespace

QueuePool::~QueuePool() {
  for (auto& cq : idle_) Retire(std::move(cq));
}

std::unique_ptr<grpc::CompletionQueue> QueuePool::Take() {
  {
    std::lock_guard lock(mu_);
    if (!idle_.empty()) {
      auto cq = std::move(idle_.back());
      idle_.pop_back();
      return cq;
    }
  }
  return std::make_unique<grpc::CompletionQueue>();
}

void QueuePool::Give(std::unique_ptr<grpc::CompletionQueue> cq) {
  std::lock_guard lock(mu_);
  idle_.push_back(std::move(cq));
}

GrpcTransport::GrpcTransport(std::string address, grpc::ChannelArguments args,
                             std::shared_ptr<grpc::ChannelCredentials> credentials,
                             std::string closed_hint)
    : address_(std::move(address)),
      args_(std::move(args)),
      closed_hint_(std::move(closed_hint)),
      tls_(credentials != nullptr),
      credentials_(credentials ? std::move(credentials) : grpc::InsecureChannelCredentials()) {}

std::unique_ptr<GrpcTransport> GrpcTransport::Create(
    const std::string& address, const grpc::ChannelArguments& args,
    std::shared_ptr<grpc::ChannelCredentials> credentials, std::string closed_hint) {
  std::unique_ptr<GrpcTransport> t(
      new GrpcTransport(address, args, std::move(credentials), std::move(closed_hint)));
  t->connection_ = t->Connect();
  if (!t->connection_->stub) return nullptr;
  return t;
}

std::shared_ptr<const GrpcTransport::Connection> GrpcTransport::Connect() const {
  auto c = std::make_shared<Connection>();
  c->channel = grpc::CreateCustomChannel(address_, credentials_, args_);
  if (c->channel) c->stub = Master::NewStub(c->channel);
  return c;
}

std::shared_ptr<const GrpcTransport::Connection> GrpcTransport::Current() const {
  std::lock_guard lock(mu_);
  return connection_;
}

// After a call on `used` found the master unreachable: when that channel has
// given up on its connection (TRANSIENT_FAILURE), replaces it by a new one,
// which connects on its first call. gRPC 1.51 leaves a failed connection
// idle once its backoff has passed and fails every call at once with the
// old error until something else makes it connect: a restarted master
// stayed unreachable to a running client or node for about 5 s.
void GrpcTransport::Renew(const std::shared_ptr<const Connection>& used) {
  if (used->channel->GetState(/*try_to_connect=*/false) != GRPC_CHANNEL_TRANSIENT_FAILURE) {
    return;
  }
  std::shared_ptr<const Connection> fresh = Connect();
  if (!fresh->stub) return;
  std::lock_guard lock(mu_);
  if (connection_ == used) connection_.swap(fresh);  // another thread may have renewed it
}

// One unary call on a pooled queue; returns when it completed (the deadline
// bounds that).
grpc::Status GrpcTransport::CallOnce(const Connection& conn, const ControlCall& call,
                                     grpc::ClientContext& ctx, const Message& request,
                                     Message* reply, const std::function<void()>* meanwhile) {
  std::unique_ptr<grpc::CompletionQueue> cq = queues_.Take();
  grpc::Status status;
  call.start_grpc(*conn.stub, &ctx, request, reply, cq.get(), &status);
  void* tag = nullptr;
  bool ok = false;
  bool done = false;  // the queue is this call's alone: its one event is this call's end
  if (meanwhile != nullptr && *meanwhile) {
    // gRPC queues the request's write until the queue is polled. One poll
    // that does not wait sends it, so the master works while `meanwhile` runs
    // (measured: the wait left after a 1 MiB copy fell from ~80 to ~10 us).
    done = cq->AsyncNext(&tag, &ok, std::chrono::system_clock::time_point{}) ==
           grpc::CompletionQueue::GOT_EVENT;
    (*meanwhile)();
  }
  if (!done) done = cq->Next(&tag, &ok);
  if (!done || tag != &ctx || !ok) {
    Retire(std::move(cq));
    return grpc::Status(grpc::StatusCode::INTERNAL, "completion queue lost the call");
  }
  queues_.Give(std::move(cq));
  return status;
}

TryOutcome GrpcTransport::Try(const ControlCall& call, const Message& request, Message* reply,
                              int64_t timeout_ms, const std::function<void()>* meanwhile) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(timeout_ms));
  reply->Clear();
  std::shared_ptr<const Connection> conn = Current();
  const grpc::Status s = CallOnce(*conn, call, ctx, request, reply, meanwhile);
  if (s.ok()) return {Status::Ok()};
  if (s.error_code() != grpc::StatusCode::UNAVAILABLE) {
    return {client_wire::FromGrpc(s, call.name, address_, timeout_ms)};
  }
  Renew(conn);
  std::string why = s.error_message();
  // What gRPC says when the master ends the connection in its handshake (a
  // plain channel to a TLS port, a client certificate refused).
  if (!closed_hint_.empty() && why.find("Socket closed") != std::string::npos) {
    why += " (" + closed_hint_ + ")";
  }
  if (tls_ && why.find("wrong version number") != std::string::npos) {  // a plain port
    why += " (the master does not serve TLS there: was it started with --tls-cert and --tls-key?)";
  }
  if (tls_ && why.find("certificate verify failed") != std::string::npos) {
    why += " (the master's certificate is not signed by a CA of this client's --tls-ca)";
  }
  return {Status(ErrorCode::kUnavailable, std::move(why)), true};
}

}  // namespace crescent::rpc
