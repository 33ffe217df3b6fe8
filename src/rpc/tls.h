// TLS on the control plane (docs/security.md, "TLS"): the PEM files that a
// master or a client is given, read and checked once at start, and the
// client's side of a TLS connection over a non-blocking socket (the lean
// control protocol's ControlChannel). The master's side of the lean protocol
// is Asio's ssl stream (control_server.cc); gRPC's are its SSL credentials
// (MasterServer, GrpcTransport). All of it is OpenSSL's; nothing here does
// cryptography of its own.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "crescent/status.h"
#include "crescent/tls_config.h"

typedef struct ssl_st SSL;
typedef struct ssl_ctx_st SSL_CTX;

namespace crescent::rpc {

// Paths of PEM files, as a master and a client read them (crescent/tls_config.h).
using TlsFiles = TlsConfig;

// The files' contents, checked: each certificate and key parses, the key is
// the certificate's, the CA file holds at least one certificate.
struct TlsPem {
  std::string ca;
  std::string cert;
  std::string key;
};

// A master's files: off (an empty TlsPem) when none is given; otherwise cert
// and key are needed, ca optional. kInvalidArgument naming the flag and the
// file for a file that cannot be read or does not parse, a key that is not
// the certificate's, or a half-given pair.
StatusOr<TlsPem> LoadServerTls(const TlsFiles& files);
// A client's files: off when none is given; cert and key need each other
// and ca.
StatusOr<TlsPem> LoadClientTls(const TlsFiles& files);

// One TLS connection of a client over a connected non-blocking socket, which
// it does not own. Each call takes the session's lock for the OpenSSL call
// only (a reader and a writer may use it from two threads); none blocks: a
// call that cannot go on says which readiness of the socket it waits for.
class TlsClientSession {
 public:
  struct Io {
    long n = 0;      // > 0: bytes moved; 0 with want 0 and ok: the peer closed
    short want = 0;  // POLLIN or POLLOUT: wait for it, then call again
    Status status;   // not OK: the connection failed
  };
  ~TlsClientSession();
  Io Handshake();  // n = 1 once done
  Io Read(char* buf, size_t len);
  Io Write(const char* buf, size_t len);
  // On an idle connection: whether what the socket holds is only TLS's own
  // records (OK and want POLLIN), data (n > 0), or a close (n 0, or an error).
  Io Peek();

 private:
  friend class TlsClientContext;
  TlsClientSession(SSL* ssl, std::string target) : ssl_(ssl), target_(std::move(target)) {}
  Io Result(int rc, const char* what);
  std::mutex mu_;
  SSL* ssl_;
  std::string target_;
};

// A client's TLS settings (an OpenSSL context): TLS 1.2 or later, the
// master's certificate verified against the CA and its name checked.
class TlsClientContext {
 public:
  static StatusOr<std::shared_ptr<TlsClientContext>> Create(const TlsPem& pem,
                                                            std::string server_name);
  ~TlsClientContext();
  // A session on `fd` to `host` (the name checked, unless server_name was
  // given), not yet shaken hands; `target` names it in errors.
  StatusOr<std::unique_ptr<TlsClientSession>> Start(int fd, const std::string& host,
                                                    const std::string& target) const;

 private:
  TlsClientContext(SSL_CTX* ctx, std::string server_name)
      : ctx_(ctx), server_name_(std::move(server_name)) {}
  SSL_CTX* ctx_;
  std::string server_name_;
};

// OpenSSL's last error on this thread as text (and clears the queue); empty
// when there is none.
std::string OpenSslError();

}  // namespace crescent::rpc
