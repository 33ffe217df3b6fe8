// ControlChannel: a client's kept connection to the master's lean control
// protocol (control_server.h), TCP or Unix socket. Thread-safe, and pipelined:
// concurrent calls share the connection, each frame tagged with its own id.
//
// No thread of its own: a caller writes its request, then either reads the
// socket itself (when no other caller is reading) or waits for the reader to
// hand it its answer. The reader delivers every answer it reads and gives the
// socket up once its own has arrived. So a lone caller pays one write and one
// read, and no thread hop.
//
// Errors: a connection that fails (refused, reset, closed, a malformed answer,
// an answer longer than `max_answer`, or an error answer for no call: the
// master refusing the connection, say past its --max-connections, whose reason
// is the error's text) fails every call on it with kUnavailable and stays
// broken; the owner makes a new one. A call whose deadline passes returns
// kTimeout; the connection stays usable (a late answer is dropped by its id).
// The master closes a connection idle past its --idle-timeout-ms; broken()
// notices that before a call is sent on it.
#pragma once

#include <google/protobuf/message_lite.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "auth/handshake.h"
#include "crescent/status.h"
#include "rpc/control_methods.h"
#include "rpc/tls.h"

namespace crescent::rpc {

class ControlChannel {
 public:
  using Deadline = std::chrono::steady_clock::time_point;

  // Connects to "unix:PATH" or "HOST:PORT" and says Hello: `*instance` is the
  // master's (ControlEndpointsResponse.instance). A caller waiting for its
  // answer polls the socket for up to `spin` before it sleeps in poll(): on a
  // VM, waking a thread whose vCPU went idle costs more than the call. An
  // answer longer than `max_answer` bytes (the client's message limit) breaks
  // the connection before any room is made for it. With a `token`, the
  // connection then authenticates (docs/security.md): UNAUTHENTICATED when
  // the master does not know the token or cannot prove it holds its verifier,
  // UNSUPPORTED when it authenticates nobody. With `tls` (TCP only), the
  // connection is TLS (tls.h) from its first byte: a master whose certificate
  // does not verify, or that does not serve TLS, fails the connection with
  // kUnavailable saying so.
  static StatusOr<std::unique_ptr<ControlChannel>> Connect(
      const std::string& target, Deadline deadline, uint64_t* instance,
      std::chrono::microseconds spin = std::chrono::microseconds(0), uint64_t max_answer = 64 << 20,
      const auth::Token* token = nullptr, const TlsClientContext* tls = nullptr);
  ~ControlChannel();

  // One call. `meanwhile`, when set, runs on the calling thread after the
  // request is sent and before the answer is awaited. An error answer (the
  // master refused the frame or is shutting down: kUnavailable) comes back as
  // its status; the reply message is filled only on success.
  Status Call(ControlMethod method, const google::protobuf::MessageLite& request,
              google::protobuf::MessageLite* reply, Deadline deadline,
              const std::function<void()>* meanwhile = nullptr);
  // The same with raw bytes each way (the handshake's messages, which are not protobuf).
  Status CallRaw(ControlMethod method, std::string_view request, std::string* answer,
                 Deadline deadline);

  // The connection failed, or the master closed it while no call was on it
  // (checked with one poll() when it has been idle for 10 ms); every call
  // on it fails.
  bool broken() const;
  const std::string& target() const;
  // Who the master (having proved it holds the token's verifier) says this
  // connection is; nullopt when it did not authenticate.
  const std::optional<auth::Identity>& identity() const;

 private:
  struct Impl;
  explicit ControlChannel(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace crescent::rpc
