// The authentication handshake: each connection authenticates once, by
// challenge and response, and the token's secret never crosses the wire. A
// transport carries the four messages (handshake_wire.h) and this file decides;
// it does no I/O, so the same state machines serve every transport and tests
// drive them directly.
//
//   client                                         server
//   ClientFirst(name, client nonce)          ->
//                                            <-    ServerFirst(salt, client nonce | server nonce)
//   ClientFinal(nonce, proof)                ->
//                                            <-    ServerFinal(OK, server signature, role, tenant)
//                                                  or ServerFinal(UNAUTHENTICATED, why)
//
// With AuthMessage = wire::AuthMessage(ClientFirst, ServerFirst) and the keys of
// scram.h:  proof            = ClientKey XOR HMAC(StoredKey, AuthMessage)
//           server signature = HMAC(ServerKey, AuthMessage)
// The server recovers ClientKey' = proof XOR HMAC(StoredKey, AuthMessage) and
// accepts when SHA-256(ClientKey') equals StoredKey; the client accepts the
// server only when the signature checks, i.e. when the server holds this
// token's verifier. Fresh nonces on both sides make every exchange's proof
// different, so a recorded one cannot be replayed.
//
// Failures say only that the token is unknown: an unknown name, a wrong secret
// and a nonce that is not this connection's all read alike. For an unknown name
// the server answers a salt derived from the name under a per-process random
// key, the same on every try, so the first reply does not tell which names
// exist either.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "auth/auth_file.h"
#include "auth/handshake_wire.h"
#include "auth/scram.h"
#include "auth/token.h"
#include "crescent/status.h"

namespace crescent::auth {

// Who a connection authenticated as.
struct Identity {
  std::string name;
  Role role = Role::kClient;
  std::string tenant;  // empty: none
};

// The message of every credential failure.
inline constexpr std::string_view kUnknownTokenMessage =
    "unknown token (revoked, mistyped, or not in this cluster's auth file)";

// What a server checks tokens against: the auth file as loaded, and a random key
// for the salts of names it does not hold. Immutable: a reload makes a new one,
// and handshakes under way keep the one they began with.
class ServerCredentials {
 public:
  explicit ServerCredentials(AuthFile file, const Key& mock_key = RandomKey())
      : file_(std::move(file)), mock_key_(mock_key) {}

  const AuthFile& file() const { return file_; }
  // The user's verifier, or for an unknown name (*known false) one derived
  // from the name that no token matches.
  Verifier VerifierOf(std::string_view name, const UserEntry** entry) const;

 private:
  AuthFile file_;
  Key mock_key_;
};

// Where nonces come from: RandomKey, or a scripted source in tests.
using NonceSource = std::function<Key()>;

class ServerHandshake {
 public:
  enum class State { kExpectClientFirst, kExpectClientFinal, kAuthenticated, kFailed };

  explicit ServerHandshake(std::shared_ptr<const ServerCredentials> credentials,
                           NonceSource nonces = RandomKey);

  // The client's next message in, the reply to send back out. Afterwards
  // state() says whether another message is expected or how it ended; a
  // message that is not the expected one, or any message once it has ended,
  // fails it (the reply is then a failing ServerFinal).
  std::string Step(std::string_view in);

  State state() const { return state_; }
  // Set once kAuthenticated.
  const Identity& identity() const { return identity_; }
  // Once kFailed, what the last reply said (UNAUTHENTICATED).
  const Status& failure() const { return failure_; }
  // The credentials this handshake checks against.
  const ServerCredentials& credentials() const { return *credentials_; }

 private:
  std::string OnClientFirst(std::string_view in);
  std::string OnClientFinal(std::string_view in);
  std::string Fail(std::string message);

  std::shared_ptr<const ServerCredentials> credentials_;
  NonceSource nonces_;
  State state_ = State::kExpectClientFirst;
  // Between the two steps:
  wire::ClientFirst first_;
  wire::ServerFirst reply_;
  Verifier verifier_;
  std::optional<UserEntry> entry_;  // nullopt: an unknown name
  Identity identity_;
  Status failure_;
};

class ClientHandshake {
 public:
  explicit ClientHandshake(Token token, NonceSource nonces = RandomKey);

  // The first message (ClientFirst).
  std::string Start();
  // The server's ServerFirst in, the ClientFinal to send.
  StatusOr<std::string> OnServerFirst(std::string_view in);
  // The server's ServerFinal in: who the server says this connection is, once
  // its signature shows that it holds this token's verifier; else the
  // server's error, or UNAUTHENTICATED for a server that proves nothing.
  StatusOr<Identity> OnServerFinal(std::string_view in);

 private:
  Token token_;
  NonceSource nonces_;
  wire::ClientFirst first_;
  std::optional<wire::ServerFirst> reply_;
};

}  // namespace crescent::auth
