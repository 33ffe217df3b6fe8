#include "rpc/tls.h"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <poll.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

namespace crescent::rpc {
namespace {

// PEM files are small; anything larger is not one.
constexpr std::streamsize kMaxPemBytes = 1 << 20;

Status Invalid(const std::string& flag, const std::string& path, const std::string& why) {
  return Status(ErrorCode::kInvalidArgument, flag + " '" + path + "': " + why);
}

StatusOr<std::string> ReadPem(const std::string& flag, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Invalid(flag, path, std::string("cannot read: ") + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Invalid(flag, path, "cannot read");
  std::string s = std::move(text).str();
  if (static_cast<std::streamsize>(s.size()) > kMaxPemBytes) {
    return Invalid(flag, path, "larger than 1 MiB: not a PEM file");
  }
  return s;
}

struct BioDeleter {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Deleter {
  void operator()(X509* x) const { X509_free(x); }
};
struct KeyDeleter {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using Bio = std::unique_ptr<BIO, BioDeleter>;
using Cert = std::unique_ptr<X509, X509Deleter>;
using Key = std::unique_ptr<EVP_PKEY, KeyDeleter>;

Bio MemoryBio(const std::string& text) {
  return Bio(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
}

// The certificates in `text`, in order; none when it holds none that parse.
std::vector<Cert> ParseCerts(const std::string& text) {
  std::vector<Cert> out;
  Bio bio = MemoryBio(text);
  while (X509* x = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) out.emplace_back(x);
  ERR_clear_error();  // the end of the file reads as an error
  return out;
}

Status CheckCa(const std::string& flag, const std::string& path, const std::string& text) {
  if (ParseCerts(text).empty()) return Invalid(flag, path, "holds no PEM certificate");
  return Status::Ok();
}

// The certificate (chain) and its key: both parse, and the key is the first
// certificate's.
Status CheckPair(const TlsFiles& files, const TlsPem& pem) {
  std::vector<Cert> certs = ParseCerts(pem.cert);
  if (certs.empty()) return Invalid("--tls-cert", files.cert, "holds no PEM certificate");
  Bio bio = MemoryBio(pem.key);
  Key key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (!key) {
    return Invalid(
        "--tls-key", files.key,
        "holds no PEM private key (an encrypted key is not supported): " + OpenSslError());
  }
  if (X509_check_private_key(certs.front().get(), key.get()) != 1) {
    ERR_clear_error();
    return Invalid("--tls-key", files.key,
                   "is not the key of the certificate in --tls-cert '" + files.cert + "'");
  }
  return Status::Ok();
}

StatusOr<TlsPem> LoadAll(const TlsFiles& files) {
  TlsPem pem;
  if (!files.ca.empty()) {
    StatusOr<std::string> ca = ReadPem("--tls-ca", files.ca);
    if (!ca.ok()) return ca.status();
    if (Status s = CheckCa("--tls-ca", files.ca, *ca); !s.ok()) return s;
    pem.ca = std::move(*ca);
  }
  if (!files.cert.empty()) {
    StatusOr<std::string> cert = ReadPem("--tls-cert", files.cert);
    if (!cert.ok()) return cert.status();
    StatusOr<std::string> key = ReadPem("--tls-key", files.key);
    if (!key.ok()) return key.status();
    pem.cert = std::move(*cert);
    pem.key = std::move(*key);
    if (Status s = CheckPair(files, pem); !s.ok()) return s;
  }
  return pem;
}

}  // namespace

std::string OpenSslError() {
  std::string out;
  while (const unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out;
}

StatusOr<TlsPem> LoadServerTls(const TlsFiles& files) {
  if (files.cert.empty() && files.key.empty() && files.ca.empty()) return TlsPem{};
  if (files.cert.empty() || files.key.empty()) {
    return Status(ErrorCode::kInvalidArgument,
                  "TLS needs both --tls-cert and --tls-key (--tls-ca adds client certificates)");
  }
  return LoadAll(files);
}

StatusOr<TlsPem> LoadClientTls(const TlsFiles& files) {
  if (files.cert.empty() && files.key.empty() && files.ca.empty()) {
    if (!files.server_name.empty()) {
      return Status(ErrorCode::kInvalidArgument, "--tls-server-name needs --tls-ca");
    }
    return TlsPem{};
  }
  if (files.ca.empty()) {
    return Status(ErrorCode::kInvalidArgument,
                  "a client's TLS needs --tls-ca (the authority the master's certificate is "
                  "signed by); --tls-cert and --tls-key add a client certificate");
  }
  if (files.cert.empty() != files.key.empty()) {
    return Status(ErrorCode::kInvalidArgument, "--tls-cert and --tls-key go together");
  }
  return LoadAll(files);
}

// ---- The client's sessions ----

TlsClientSession::~TlsClientSession() { SSL_free(ssl_); }

TlsClientSession::Io TlsClientSession::Result(int rc, const char* what) {
  if (rc > 0) return {rc, 0, Status::Ok()};
  const int err = SSL_get_error(ssl_, rc);
  switch (err) {
    case SSL_ERROR_WANT_READ: return {0, POLLIN, Status::Ok()};
    case SSL_ERROR_WANT_WRITE: return {0, POLLOUT, Status::Ok()};
    case SSL_ERROR_ZERO_RETURN: return {0, 0, Status::Ok()};
    default: break;
  }
  std::string why = OpenSslError();
  if (err == SSL_ERROR_SYSCALL) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) return {0, POLLIN, Status::Ok()};
    if (why.empty()) why = errno != 0 ? std::strerror(errno) : "the master closed the connection";
  }
  if (const long v = SSL_get_verify_result(ssl_); v != X509_V_OK) {
    why = std::string("the master's certificate is not trusted: ") +
          X509_verify_cert_error_string(v) + " (--tls-ca, --tls-server-name)";
  }
  ERR_clear_error();
  return {0, 0,
          Status(ErrorCode::kUnavailable, "TLS " + std::string(what) + " with the master at " +
                                              target_ + " failed: " + why)};
}

TlsClientSession::Io TlsClientSession::Handshake() {
  std::lock_guard lock(mu_);
  ERR_clear_error();
  errno = 0;
  const int rc = SSL_connect(ssl_);
  Io io = Result(rc, "handshake");
  if (rc <= 0 && io.want == 0 && io.status.ok()) {
    io.status = Status(ErrorCode::kUnavailable,
                       "TLS handshake with the master at " + target_ + " failed: closed");
  }
  const std::string& m = io.status.message();
  if (m.find("wrong version number") != std::string::npos ||
      m.find("packet length too long") != std::string::npos) {
    // What a plain listener's answer reads as.
    io.status = Status(ErrorCode::kUnavailable,
                       m + " (the master does not serve TLS there: was it started with "
                           "--tls-cert and --tls-key?)");
  }
  return io;
}

TlsClientSession::Io TlsClientSession::Read(char* buf, size_t len) {
  std::lock_guard lock(mu_);
  ERR_clear_error();
  errno = 0;
  size_t n = 0;
  const int rc = SSL_read_ex(ssl_, buf, len, &n);
  return rc == 1 ? Io{static_cast<long>(n), 0, Status::Ok()} : Result(rc, "read");
}

TlsClientSession::Io TlsClientSession::Write(const char* buf, size_t len) {
  std::lock_guard lock(mu_);
  ERR_clear_error();
  errno = 0;
  size_t n = 0;
  const int rc = SSL_write_ex(ssl_, buf, len, &n);
  return rc == 1 ? Io{static_cast<long>(n), 0, Status::Ok()} : Result(rc, "write");
}

TlsClientSession::Io TlsClientSession::Peek() {
  std::lock_guard lock(mu_);
  ERR_clear_error();
  errno = 0;
  char byte;
  size_t n = 0;
  const int rc = SSL_peek_ex(ssl_, &byte, 1, &n);
  return rc == 1 ? Io{static_cast<long>(n), 0, Status::Ok()} : Result(rc, "read");
}

// ---- The client's context ----

StatusOr<std::shared_ptr<TlsClientContext>> TlsClientContext::Create(const TlsPem& pem,
                                                                     std::string server_name) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  if (ctx == nullptr) return Status(ErrorCode::kInternal, "SSL_CTX_new: " + OpenSslError());
  std::shared_ptr<TlsClientContext> out(new TlsClientContext(ctx, std::move(server_name)));
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  // The master closes a connection without close_notify (its idle timeout, a
  // refusal): a close, as on a plain socket. Frames carry their own lengths,
  // so a cut is seen as one.
  SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
  // One recv() for a record's header and body (and whatever follows), not one
  // each: a call's answer is one small record.
  SSL_CTX_set_read_ahead(ctx, 1);
  X509_STORE* store = SSL_CTX_get_cert_store(ctx);
  for (Cert& c : ParseCerts(pem.ca)) {
    if (X509_STORE_add_cert(store, c.get()) != 1) {
      return Status(ErrorCode::kInvalidArgument, "--tls-ca: " + OpenSslError());
    }
  }
  if (!pem.cert.empty()) {
    std::vector<Cert> chain = ParseCerts(pem.cert);
    Bio bio = MemoryBio(pem.key);
    Key key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
    bool ok = !chain.empty() && key && SSL_CTX_use_certificate(ctx, chain.front().get()) == 1 &&
              SSL_CTX_use_PrivateKey(ctx, key.get()) == 1;
    for (size_t i = 1; ok && i < chain.size(); ++i) {
      ok = SSL_CTX_add1_chain_cert(ctx, chain[i].get()) == 1;
    }
    if (!ok) return Status(ErrorCode::kInvalidArgument, "--tls-cert/--tls-key: " + OpenSslError());
  }
  return out;
}

TlsClientContext::~TlsClientContext() { SSL_CTX_free(ctx_); }

StatusOr<std::unique_ptr<TlsClientSession>> TlsClientContext::Start(
    int fd, const std::string& host, const std::string& target) const {
  SSL* ssl = SSL_new(ctx_);
  if (ssl == nullptr) return Status(ErrorCode::kInternal, "SSL_new: " + OpenSslError());
  std::unique_ptr<TlsClientSession> session(new TlsClientSession(ssl, target));
  const std::string& name = server_name_.empty() ? host : server_name_;
  in6_addr ip6;
  in_addr ip4;
  const bool is_ip =
      inet_pton(AF_INET, name.c_str(), &ip4) == 1 || inet_pton(AF_INET6, name.c_str(), &ip6) == 1;
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
  const bool named = is_ip ? X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str()) == 1
                           : SSL_set1_host(ssl, name.c_str()) == 1 &&
                                 SSL_set_tlsext_host_name(ssl, name.c_str()) == 1;
  if (!named || SSL_set_fd(ssl, fd) != 1) {
    return Status(ErrorCode::kInvalidArgument,
                  "TLS to " + target + ": cannot check the name '" + name + "': " + OpenSslError());
  }
  return session;
}

}  // namespace crescent::rpc
