// Server side of the lean control protocol. Threads, accept and shutdown follow
// the data plane's server (transfer/tcp_server.cc): one io_context per thread,
// connections dealt round-robin at accept, and Stop() closes every socket after
// the threads are joined. A connection's coroutine keeps one input buffer: it
// answers every complete frame in it, in order, into one output buffer, writes
// that, then reads again.
#include "rpc/control_server.h"

#include <algorithm>
#include <array>
#include <asio/bind_executor.hpp>
#include <asio/co_spawn.hpp>
#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/local/stream_protocol.hpp>
#include <asio/post.hpp>
#include <asio/redirect_error.hpp>
#include <asio/ssl.hpp>
#include <asio/steady_timer.hpp>
#include <asio/thread_pool.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/write.hpp>
#include <cstring>
#include <exception>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "auth/handshake.h"
#include "common/endpoint.h"
#include "common/listen_check.h"
#include "rpc/access.h"
#include "rpc/control_methods.h"
#include "rpc/messages.pb.h"
#include "rpc/record_call.h"
#include "rpc/server_metrics.h"
#include "transfer/asio_server.h"
#include "transfer/connection_table.h"
#include "transfer/frame_buffer.h"
#include "transfer/wire.h"

namespace crescent::rpc {
namespace {

using asio::ip::tcp;
using unix_socket = asio::local::stream_protocol;
using tls_stream = asio::ssl::stream<tcp::socket>;
namespace wire = transfer::wire;

// Workers for calls that wait for the log's sync and for kCall's, which may
// be slow (a mount's sync, a RemoveAll, a long List). A waiting call holds its
// worker, so the workers bound how many waits share one sync or one etcd
// commit (group commit); a waiting worker costs a blocked thread, no CPU.
constexpr int kWorkers = 32;

void IgnoreException(std::exception_ptr) {}

// The first byte of a TLS connection (a handshake record).
constexpr unsigned char kTlsHandshakeRecord = 0x16;

// The socket under a connection's stream (itself when plain).
template <typename Stream>
auto& Lowest(Stream& s) {
  if constexpr (std::is_same_v<Stream, tls_stream>) {
    return s.next_layer();
  } else {
    return s;
  }
}

// The lean protocol's TLS settings from checked PEM (ControlServerOptions::tls):
// TLS 1.2 or later, no session tickets (a client never resumes, and a ticket
// would be bytes on an idle connection), client certificates required and
// verified against the CA when there is one.
StatusOr<std::unique_ptr<asio::ssl::context>> MakeTlsContext(const TlsPem& pem) {
  auto ctx = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_server);
  SSL_CTX_set_min_proto_version(ctx->native_handle(), TLS1_2_VERSION);
  SSL_CTX_set_num_tickets(ctx->native_handle(), 0);
  asio::error_code ec;
  ctx->use_certificate_chain(asio::buffer(pem.cert), ec);
  if (!ec) ctx->use_private_key(asio::buffer(pem.key), asio::ssl::context::pem, ec);
  if (!ec && !pem.ca.empty()) {
    ctx->add_certificate_authority(asio::buffer(pem.ca), ec);
    if (!ec) {
      ctx->set_verify_mode(asio::ssl::verify_peer | asio::ssl::verify_fail_if_no_peer_cert, ec);
    }
  }
  if (ec) {
    return Status(ErrorCode::kInvalidArgument,
                  "control server TLS (--tls-cert, --tls-key, --tls-ca): " + ec.message());
  }
  return ctx;
}

// The gRPC method of the same call, under which its metrics are kept (kHello,
// which is none, is never recorded).
RpcMethod RpcMethodOf(ControlMethod m) {
#define CRESCENT_RPC_METHOD_OF(name, Req, Resp, lean) \
  if (std::optional<ControlMethod>(lean) == m) return RpcMethod::k##name;
  CRESCENT_CONTROL_CALLS(CRESCENT_RPC_METHOD_OF)
#undef CRESCENT_RPC_METHOD_OF
  return RpcMethod::kStats;
}

// Counts a connection open for as long as its coroutine frame lives (a frame
// destroyed while suspended included).
class CountedConnection {
 public:
  explicit CountedConnection(RpcServerMetrics* metrics) : metrics_(metrics) {
    if (metrics_) metrics_->LeanConnection(+1);
  }
  ~CountedConnection() {
    if (metrics_) metrics_->LeanConnection(-1);
  }
  CountedConnection(const CountedConnection&) = delete;
  CountedConnection& operator=(const CountedConnection&) = delete;

 private:
  RpcServerMetrics* metrics_;
};

// Appends an error answer to `out`.
void AppendError(const Status& s, uint64_t request_id, std::string& out) {
  wire::ResponseBytes bytes;
  const size_t n = wire::EncodeResponse(s.code(), request_id, 0, s.message(), bytes);
  out.append(reinterpret_cast<const char*>(bytes.data()), n);
}

// Appends an answer carrying `reply` to `out`.
template <typename Msg>
void AppendReply(const Msg& reply, uint64_t request_id, std::string& out) {
  const size_t at = out.size();
  out.resize(at + wire::kResponseHeaderSize);
  reply.AppendToString(&out);
  wire::ResponseBytes header;
  wire::EncodeResponse(ErrorCode::kOk, request_id, out.size() - at - wire::kResponseHeaderSize, {},
                       header);
  std::memcpy(out.data() + at, header.data(), wire::kResponseHeaderSize);
}

// Appends an answer carrying `bytes` as they are (the handshake's messages).
void AppendRaw(std::string_view bytes, uint64_t request_id, std::string& out) {
  wire::ResponseBytes header;
  wire::EncodeResponse(ErrorCode::kOk, request_id, bytes.size(), {}, header);
  out.append(reinterpret_cast<const char*>(header.data()), wire::kResponseHeaderSize);
  out.append(bytes);
}

// One connection's authentication: the handshake under way, then who it is.
// Used only by the connection's own coroutine.
struct ConnectionAuth {
  std::optional<auth::ServerHandshake> handshake;
  std::optional<auth::Identity> identity;
  // Who its calls come from: Unchecked() until it authenticates, on a master
  // without credentials for good.
  Caller caller;
  // Once authenticated: the credentials' generation last checked against, and
  // the token's StoredKey then (a name revoked and added again has a new one).
  uint64_t generation = 0;
  auth::Key stored_key{};
};

// Parses `body` as Req, runs the handler for `caller`, and appends the answer
// to `out`; a caller whose role may not make the call is answered
// PERMISSION_DENIED (access.h), and the connection goes on.
template <typename Req, typename Resp>
void Answer(const MasterHandlers& handlers, HandlerFn<Req, Resp> handler, RpcMethod m,
            const Caller& caller, std::string_view body, uint64_t request_id,
            RpcServerMetrics* metrics, std::string& out) {
  if (Status allowed = CheckRole(caller, m); !allowed.ok()) {
    if (metrics) metrics->RecordError(m, allowed.code());
    AppendError(allowed, request_id, out);
    return;
  }
  Req req;
  if (!req.ParseFromArray(body.data(), static_cast<int>(body.size()))) {
    AppendError(Status(ErrorCode::kParseError,
                       "control call body is not a valid " + Req::GetDescriptor()->name()),
                request_id, out);
    return;
  }
  Resp resp;
  RunRecorded(handlers, handler, m, caller, req, resp, metrics);
  AppendReply(resp, request_id, out);
}

}  // namespace

struct ControlServer::Impl {
  Impl(const ControlServerOptions& o, const MasterHandlers& h, RpcServerMetrics* m,
       const DrainState& d)
      : options(o), handlers(h), metrics(m), draining(d) {}

  template <typename Acceptor>
  asio::awaitable<void> Accept(Acceptor& acceptor, transfer::ConnectionTable::Listener& listener);
  template <typename Socket>
  asio::awaitable<void> Serve(Socket socket, size_t thread,
                              transfer::ConnectionTable::Listener& listener);
  // A TLS connection's handshake; false when the connection is to be closed
  // (a plain client was told that this port serves TLS, or the handshake failed).
  asio::awaitable<bool> StartTls(tls_stream& stream);
  // Answers one frame into `out`; false when the connection is to be closed
  // after the answer (an authentication that failed, a call before one).
  bool Dispatch(const wire::ControlHeader& h, std::string_view body, ConnectionAuth& conn,
                std::string& out);
  // The credentials now (null: none are checked).
  std::shared_ptr<const auth::ServerCredentials> Credentials() {
    std::lock_guard lock(credentials_mu);
    return credentials;
  }
  // False when the connection's token is no longer in the credentials (it is
  // checked again only after SetCredentials).
  bool StillValid(ConnectionAuth& conn);
  // A kAuthenticate frame, counted in the metrics once it ends the handshake.
  bool Authenticate(std::string_view body, uint64_t id, ConnectionAuth& conn, std::string& out);
  bool Handshake(std::string_view body, uint64_t id, ConnectionAuth& conn, std::string& out);
  // A kCall frame: the row its first byte names, served as that row's handler.
  bool Call(std::string_view body, uint64_t id, const Caller& caller, std::string& out);
  // Whether the frame runs on a worker rather than the I/O thread.
  bool OnWorker(ControlMethod m) const {
    return workers &&
           (m == ControlMethod::kCall || (options.acks_wait_for_sync && MayWaitForLog(m)));
  }

  ControlServerOptions options;
  // Null: the TCP port is plain. Before ios: outlives every stream.
  std::unique_ptr<asio::ssl::context> tls;
  const MasterHandlers& handlers;
  RpcServerMetrics* metrics;
  const DrainState& draining;
  // Declared before ios so that coroutine frames destroyed with them can still
  // unregister their sockets.
  std::unique_ptr<transfer::ConnectionTable> connections;
  transfer::ConnectionTable::Listener tcp_connections{0};
  transfer::ConnectionTable::Listener unix_connections{0};
  std::mutex credentials_mu;  // guards credentials
  std::shared_ptr<const auth::ServerCredentials> credentials;
  // Bumped by every SetCredentials: a connection compares it with what it last
  // checked (one relaxed load per call) and looks again only when it moved.
  std::atomic<uint64_t> credentials_generation{0};
  // credentials is set: read by every call of a connection not authenticated,
  // where a lock per call would cost (no credentials: every connection).
  std::atomic<bool> checking{false};
  std::mutex mu;  // guards stopped
  bool stopped = false;
  uint16_t port = 0;
  std::vector<std::unique_ptr<asio::io_context>> ios;  // one per thread; [0] accepts
  // After ios: a connection's frame parked on a worker when the server stops
  // is destroyed with the workers, before the io_context of its socket.
  // acks_wait_for_sync or credentials only (OnWorker).
  std::unique_ptr<asio::thread_pool> workers;
  size_t next_io = 0;
  std::unique_ptr<tcp::acceptor> tcp_acceptor;
  std::unique_ptr<unix_socket::acceptor> unix_acceptor;
  std::vector<std::thread> threads;
};

bool ControlServer::Impl::Authenticate(std::string_view body, uint64_t id, ConnectionAuth& conn,
                                       std::string& out) {
  const bool keep = Handshake(body, id, conn, out);
  if (metrics && (!keep || conn.identity)) {
    metrics->RecordAuthentication(keep ? RpcServerMetrics::AuthResult::kOk
                                       : RpcServerMetrics::AuthResult::kFailed);
  }
  return keep;
}

bool ControlServer::Impl::Handshake(std::string_view body, uint64_t id, ConnectionAuth& conn,
                                    std::string& out) {
  // The generation before the credentials: a SetCredentials in between then
  // makes the connection look again at its next call, never skip a reload.
  const uint64_t generation = credentials_generation.load(std::memory_order_acquire);
  std::shared_ptr<const auth::ServerCredentials> creds = Credentials();
  if (!creds) {
    AppendError(Status(ErrorCode::kUnsupported,
                       "this master authenticates nobody (it was started without an auth file)"),
                id, out);
    return false;
  }
  if (!conn.handshake) {
    if (conn.identity) {
      AppendError(Status(ErrorCode::kUnauthenticated, "this connection is already authenticated"),
                  id, out);
      return false;
    }
    conn.generation = generation;
    conn.handshake.emplace(std::move(creds));
  }
  const std::string reply = conn.handshake->Step(body);
  AppendRaw(reply, id, out);
  switch (conn.handshake->state()) {
    case auth::ServerHandshake::State::kExpectClientFirst:
    case auth::ServerHandshake::State::kExpectClientFinal: return true;
    case auth::ServerHandshake::State::kAuthenticated:
      conn.identity = conn.handshake->identity();
      conn.caller = Caller{conn.identity->role, conn.identity->name, conn.identity->tenant};
      if (const auth::UserEntry* e =
              conn.handshake->credentials().file().FindUser(conn.identity->name)) {
        conn.stored_key = e->verifier.stored_key;
      }
      conn.handshake.reset();
      return true;
    case auth::ServerHandshake::State::kFailed: break;
  }
  return false;
}

bool ControlServer::Impl::Dispatch(const wire::ControlHeader& h, std::string_view body,
                                   ConnectionAuth& conn, std::string& out) {
  const uint64_t id = h.request_id;
  if (h.method < 1 || h.method > kControlMethodMax) {
    AppendError(
        Status(ErrorCode::kInvalidArgument, "unknown control method " + std::to_string(h.method)),
        id, out);
    return true;
  }
  const auto m = static_cast<ControlMethod>(h.method);
  if (m == ControlMethod::kHello) {
    proto::ControlEndpointsResponse resp;
    resp.set_port(port);
    resp.set_unix_socket(options.unix_socket);
    resp.set_instance(options.instance);
    AppendReply(resp, id, out);
    return true;
  }
  if (m == ControlMethod::kAuthenticate) return Authenticate(body, id, conn, out);
  if (conn.identity ? !StillValid(conn) : checking.load(std::memory_order_acquire)) {
    if (conn.identity) {
      AppendError(Status(ErrorCode::kUnauthenticated,
                         "this connection's token was revoked, or changed in the auth file"),
                  id, out);
      return false;
    }
    if (metrics) metrics->RecordAuthentication(RpcServerMetrics::AuthResult::kRefused);
    AppendError(Status(ErrorCode::kUnauthenticated,
                       "this master needs a token: authenticate the connection first"),
                id, out);
    return false;
  }
  if (m == ControlMethod::kCall) return Call(body, id, conn.caller, out);
  if (draining.on()) {
    // Retryable, as gRPC's UNAVAILABLE: the client waits for the next master.
    if (metrics) metrics->RecordError(RpcMethodOf(m), ErrorCode::kUnavailable);
    AppendError(Status(ErrorCode::kUnavailable, draining.why()), id, out);
    return true;
  }
  if (metrics) metrics->RecordLeanCall();
  const RpcMethod rm = RpcMethodOf(m);
  // The table's hot calls (control_methods.h), each by its handler.
#define CRESCENT_ANSWER(name, Req, Resp, lean)                                          \
  if constexpr (std::optional<ControlMethod>(lean).has_value()) {                       \
    if (m == lean) {                                                                    \
      Answer(handlers, &MasterHandlers::name, rm, conn.caller, body, id, metrics, out); \
      return true;                                                                      \
    }                                                                                   \
  }
  CRESCENT_CONTROL_CALLS(CRESCENT_ANSWER)
#undef CRESCENT_ANSWER
  return true;
}

bool ControlServer::Impl::Call(std::string_view body, uint64_t id, const Caller& caller,
                               std::string& out) {
  if (body.empty() || static_cast<uint8_t>(body[0]) >= kRpcMethodCount) {
    AppendError(Status(ErrorCode::kInvalidArgument,
                       body.empty() ? std::string("a kCall frame without its call's number")
                                    : "unknown call number " +
                                          std::to_string(static_cast<uint8_t>(body[0]))),
                id, out);
    return true;
  }
  const auto rm = static_cast<RpcMethod>(static_cast<uint8_t>(body[0]));
  if (!ServedWhileDraining(rm) && draining.on()) {
    if (metrics) metrics->RecordError(rm, ErrorCode::kUnavailable);
    AppendError(Status(ErrorCode::kUnavailable, draining.why()), id, out);
    return true;
  }
  if (metrics) metrics->RecordLeanCall();
  body.remove_prefix(1);
  switch (rm) {
#define CRESCENT_CALL_ROW(name, Req, Resp, lean)                                 \
  case RpcMethod::k##name:                                                       \
    Answer(handlers, &MasterHandlers::name, rm, caller, body, id, metrics, out); \
    break;
    CRESCENT_CONTROL_CALLS(CRESCENT_CALL_ROW)
#undef CRESCENT_CALL_ROW
  }
  return true;
}

bool ControlServer::Impl::StillValid(ConnectionAuth& conn) {
  const uint64_t now = credentials_generation.load(std::memory_order_acquire);
  if (now == conn.generation) return true;
  std::shared_ptr<const auth::ServerCredentials> creds = Credentials();
  if (!creds) return true;  // authentication turned off
  const auth::UserEntry* e = creds->file().FindUser(conn.identity->name);
  if (e == nullptr || !auth::Equal(e->verifier.stored_key, conn.stored_key) ||
      e->role != conn.identity->role || e->tenant != conn.identity->tenant) {
    return false;
  }
  conn.generation = now;
  return true;
}

template <typename Acceptor>
asio::awaitable<void> ControlServer::Impl::Accept(Acceptor& acceptor,
                                                  transfer::ConnectionTable::Listener& listener) {
  for (;;) {
    asio::error_code ec;
    const size_t thread = next_io;
    typename Acceptor::protocol_type::socket socket(*ios[thread]);
    co_await acceptor.async_accept(socket, asio::redirect_error(asio::use_awaitable, ec));
    if (ec == asio::error::operation_aborted || !acceptor.is_open()) co_return;
    if (ec) {
      // E.g. EMFILE: back off briefly instead of spinning on the error.
      asio::steady_timer pause(*ios[0], std::chrono::milliseconds(10));
      co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      continue;
    }
    constexpr bool kTcp = std::is_same_v<Acceptor, tcp::acceptor>;
    if (!connections->Admit(listener)) {
      // A TLS client would read the plain refusal as a broken handshake.
      if (!kTcp || !tls) transfer::RefuseConnection(socket, connections->RefusalText("the master"));
      continue;
    }
    next_io = (next_io + 1) % ios.size();
    if constexpr (kTcp) {
      if (tls) {
        asio::co_spawn(*ios[thread], Serve(tls_stream(std::move(socket), *tls), thread, listener),
                       IgnoreException);
        continue;
      }
    }
    asio::co_spawn(*ios[thread], Serve(std::move(socket), thread, listener), IgnoreException);
  }
}

// Reads into a FrameBuffer, which grows only as bytes arrive: a header that
// claims a large body costs nothing until the body comes.
template <typename Socket>
asio::awaitable<void> ControlServer::Impl::Serve(Socket socket, size_t thread,
                                                 transfer::ConnectionTable::Listener& listener) {
  CountedConnection counted(metrics);
  transfer::ConnectionTable::Entry entry(*connections, thread, listener, [&socket] {
    asio::error_code ignored;
    Lowest(socket).shutdown(asio::socket_base::shutdown_both, ignored);
    Lowest(socket).close(ignored);
  });
  asio::error_code ec;
  if constexpr (!std::is_same_v<Socket, unix_socket::socket>) {
    Lowest(socket).set_option(tcp::no_delay(true), ec);
  }
  if constexpr (std::is_same_v<Socket, tls_stream>) {
    if (!co_await StartTls(socket)) {
      Lowest(socket).close(ec);
      co_return;
    }
    entry.Touch();
  }
  auto use = asio::redirect_error(asio::use_awaitable, ec);
  transfer::FrameBuffer in;
  std::string out;
  ConnectionAuth conn;
  for (bool open = true; open;) {
    for (;;) {  // every whole frame read so far
      const std::string_view pending = in.Pending();
      if (pending.size() < wire::kControlHeaderSize) break;
      StatusOr<wire::ControlHeader> h =
          wire::DecodeControl(reinterpret_cast<const uint8_t*>(pending.data()), options.max_body);
      if (!h.ok()) {  // out of sync (or not ours): say why, then hang up
        AppendError(h.status(), 0, out);
        open = false;
        break;
      }
      const size_t frame = wire::kControlHeaderSize + h->body_length;
      if (pending.size() < frame) break;
      const std::string_view body = pending.substr(wire::kControlHeaderSize, h->body_length);
      const auto m = static_cast<ControlMethod>(h->method);
      if (h->method <= kControlMethodMax && OnWorker(m)) {
        // Resumed on a worker: the completion is bound to the pool's executor
        // (a plain use_awaitable would dispatch it back to this connection's
        // I/O thread, where a wait for the log would stall every connection).
        co_await asio::post(*workers, asio::bind_executor(*workers, asio::use_awaitable));
        open = Dispatch(*h, body, conn, out);
        co_await asio::post(socket.get_executor(), asio::use_awaitable);
      } else {
        open = Dispatch(*h, body, conn, out);
      }
      in.Consume(frame);
      if (!open) break;
    }
    if (!out.empty()) {
      co_await asio::async_write(socket, asio::buffer(out), use);
      out.clear();
      if (ec) break;
      entry.Touch();
    }
    if (!open) break;
    const std::span<char> room = in.Room();
    const size_t n = co_await socket.async_read_some(asio::buffer(room.data(), room.size()), use);
    if (ec) break;
    in.Filled(n);
    entry.Touch();
  }
  Lowest(socket).close(ec);
}

asio::awaitable<bool> ControlServer::Impl::StartTls(tls_stream& stream) {
  asio::error_code ec;
  auto use = asio::redirect_error(asio::use_awaitable, ec);
  tcp::socket& raw = stream.next_layer();
  co_await raw.async_wait(tcp::socket::wait_read, use);
  unsigned char first = 0;
  if (ec || raw.receive(asio::buffer(&first, 1), tcp::socket::message_peek, ec) != 1 || ec) {
    co_return false;
  }
  if (first != kTlsHandshakeRecord) {  // a plain client: say why it gets no answer
    std::string out;
    AppendError(Status(ErrorCode::kUnavailable,
                       "this master's lean control port serves TLS (it was started with "
                       "--tls-cert): the client needs --tls-ca"),
                0, out);
    co_await asio::async_write(raw, asio::buffer(out), use);
    co_return false;
  }
  co_await stream.async_handshake(asio::ssl::stream_base::server, use);
  co_return !ec;
}

StatusOr<std::unique_ptr<ControlServer>> ControlServer::Start(const ControlServerOptions& options,
                                                              const MasterHandlers& handlers,
                                                              RpcServerMetrics* metrics,
                                                              const DrainState& draining) {
  if (options.port < 0 || options.port > 65535) {
    return Status(ErrorCode::kInvalidArgument,
                  "control port " + std::to_string(options.port) + " is not 0-65535");
  }
  if (options.limits.max_connections < 1) {
    return Status(ErrorCode::kInvalidArgument, "max_connections must be at least 1");
  }
  auto impl = std::make_unique<Impl>(options, handlers, metrics, draining);
  impl->credentials = options.credentials;
  if (!options.tls.cert.empty()) {
    StatusOr<std::unique_ptr<asio::ssl::context>> tls = MakeTlsContext(options.tls);
    if (!tls.ok()) return tls.status();
    impl->tls = std::move(*tls);
  }
  impl->checking.store(options.credentials != nullptr, std::memory_order_release);
  if (options.acks_wait_for_sync || options.credentials) {
    impl->workers = std::make_unique<asio::thread_pool>(kWorkers);
  }
  const int threads = std::max(options.threads, 1);
  impl->connections = std::make_unique<transfer::ConnectionTable>(options.limits, threads);
  for (int i = 0; i < threads; ++i) {
    impl->ios.push_back(std::make_unique<asio::io_context>(1));
    asio::co_spawn(*impl->ios.back(), impl->connections->SweepIdle(i), IgnoreException);
  }
  asio::error_code ec;
  asio::ip::address address = asio::ip::make_address(options.host, ec);
  if (ec) {
    return Status(ErrorCode::kInvalidArgument, "control server host '" + options.host +
                                                   "' is not an IP address: " + ec.message());
  }
  impl->tcp_acceptor = std::make_unique<tcp::acceptor>(*impl->ios[0]);
  tcp::endpoint endpoint(address, static_cast<uint16_t>(options.port));
  ec = transfer::ListenTcp(*impl->tcp_acceptor, endpoint);
  if (ec) {
    return Status(ErrorCode::kUnavailable,
                  "control server cannot listen on " +
                      HostPort(options.host, static_cast<uint16_t>(options.port)) + ": " +
                      ec.message() + " (--control-port)");
  }
  impl->port = impl->tcp_acceptor->local_endpoint(ec).port();
  if (!options.unix_socket.empty()) {
    const std::string what = "control server cannot listen on unix:" + options.unix_socket;
    if (auto s = CheckUnixSocketPath(what, options.unix_socket); !s.ok()) return s;
    if (auto s = RemoveStaleSocket(options.unix_socket); !s.ok()) return s;
    impl->unix_acceptor = std::make_unique<unix_socket::acceptor>(*impl->ios[0]);
    unix_socket::endpoint where(options.unix_socket);
    if (impl->unix_acceptor->open(where.protocol(), ec);
        !ec && (impl->unix_acceptor->bind(where, ec), !ec)) {
      impl->unix_acceptor->listen(asio::socket_base::max_listen_connections, ec);
    }
    if (ec) return Status(ErrorCode::kUnavailable, what + ": " + ec.message());
    asio::co_spawn(*impl->ios[0], impl->Accept(*impl->unix_acceptor, impl->unix_connections),
                   IgnoreException);
  }
  asio::co_spawn(*impl->ios[0], impl->Accept(*impl->tcp_acceptor, impl->tcp_connections),
                 IgnoreException);
  transfer::RunEach(impl->ios,
                    transfer::PollWindow(transfer::PollWindow::Us(options.spin_us),
                                         transfer::PollWindow::Us(options.spin_max_us)),
                    impl->threads);
  return std::unique_ptr<ControlServer>(new ControlServer(std::move(impl)));
}

ControlServer::ControlServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

ControlServer::~ControlServer() { Stop(); }

uint16_t ControlServer::port() const { return impl_->port; }

void ControlServer::SetCredentials(std::shared_ptr<const auth::ServerCredentials> credentials) {
  {
    std::lock_guard lock(impl_->credentials_mu);
    impl_->checking.store(credentials != nullptr, std::memory_order_release);
    impl_->credentials = std::move(credentials);
  }
  impl_->credentials_generation.fetch_add(1, std::memory_order_acq_rel);
}

void ControlServer::Stop() {
  {
    std::lock_guard lock(impl_->mu);
    if (impl_->stopped) return;
    impl_->stopped = true;
  }
  if (impl_->workers) impl_->workers->stop();
  for (auto& io : impl_->ios) io->stop();
  for (std::thread& t : impl_->threads) t.join();
  impl_->threads.clear();
  if (impl_->workers) impl_->workers->join();
  asio::error_code ec;
  impl_->tcp_acceptor->close(ec);
  if (impl_->unix_acceptor) {
    impl_->unix_acceptor->close(ec);
    std::filesystem::remove(impl_->options.unix_socket, ec);
  }
  impl_->connections->CloseAll();
}

}  // namespace crescent::rpc
