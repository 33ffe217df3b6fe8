// ControlServer: the master's lean control protocol (docs/control-plane.md), the hot
// calls of master.proto (control_methods.h) over kept TCP or Unix-socket
// connections in control frames (transfer/wire.h), served by the same handlers
// as gRPC (server_handlers.h): every validation, error and capability rule is
// theirs. MasterServer starts it beside its gRPC server.
//
// Each connection lives on one I/O thread, which reads a burst of frames,
// answers them in order on that thread, and writes the answers with one call:
// a client may pipeline. A call whose answer may wait for the operation log's
// sync (control_methods.h, MayWaitForLog) runs on a worker instead when
// `acks_wait_for_sync`, so that one client's fsync does not stall the others;
// so does every kCall (any call of the table by its row, which authenticated
// clients send for the calls without a lean number of their own) when the
// server starts with credentials.
// A malformed frame or an oversized body gets an error answer and the
// connection is closed; an unknown method or a body that does not parse gets an
// error answer and the connection goes on. Input is bounded: a connection's
// buffer grows only as bytes arrive (transfer/frame_buffer.h), each listener
// (the TCP port, the Unix socket) holds at most `limits.max_connections`, and
// a connection idle for `limits.idle_timeout` is closed
// (transfer/connection_table.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "auth/handshake.h"
#include "crescent/status.h"
#include "rpc/drain_state.h"
#include "rpc/server_handlers.h"
#include "rpc/server_metrics.h"
#include "rpc/tls.h"
#include "transfer/connection_limits.h"

namespace crescent::rpc {

struct ControlServerOptions {
  std::string host = "127.0.0.1";  // an IP address
  int port = 0;                    // 0: any free port
  std::string unix_socket;         // empty: none
  int threads = 1;                 // I/O threads
  uint32_t max_body = 64 << 20;    // bytes of one request's body
  transfer::ConnectionLimits limits;
  bool acks_wait_for_sync = false;
  uint64_t instance = 0;           // answered by Hello
  // After each request (or other work), an I/O thread polls all of its
  // connections at least spin_us before it sleeps, stretched up to spin_max_us
  // to cover the gaps it sees between calls (transfer/poll_window.h,
  // docs/control-plane.md); 0 and 0: never.
  int spin_us = 200;
  int spin_max_us = 1000;
  // Set: every connection authenticates (kAuthenticate, docs/security.md)
  // before any call but Hello; a call before that, or a failed handshake, is
  // answered UNAUTHENTICATED and the connection closed. Null: none does.
  std::shared_ptr<const auth::ServerCredentials> credentials;
  // With a certificate and key (rpc/tls.h, checked by LoadServerTls): every
  // TCP connection is TLS from its first byte, and with a CA too the client
  // must present a certificate it signed (mutual TLS). A first byte that
  // cannot begin a TLS handshake gets a plain error answer saying that the
  // port serves TLS; a failed handshake closes the connection. The Unix
  // socket stays plain (local, guarded by its file mode).
  TlsPem tls;
};

class ControlServer {
 public:
  // `handlers` and `draining` must outlive the server; `metrics` may be null.
  static StatusOr<std::unique_ptr<ControlServer>> Start(const ControlServerOptions& options,
                                                        const MasterHandlers& handlers,
                                                        RpcServerMetrics* metrics,
                                                        const DrainState& draining);
  ~ControlServer();  // Stop()s
  uint16_t port() const;
  // Replaces the credentials (a reloaded auth file; null: check none from now
  // on). New handshakes use them; an authenticated connection whose token they
  // no longer hold, with the same role and tenant, gets UNAUTHENTICATED on its
  // next call and is closed. Thread-safe.
  void SetCredentials(std::shared_ptr<const auth::ServerCredentials> credentials);
  // Closes the listeners and every connection, joins the threads. Idempotent.
  void Stop();

 private:
  struct Impl;
  explicit ControlServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace crescent::rpc
