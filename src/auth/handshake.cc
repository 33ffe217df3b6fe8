#include "auth/handshake.h"

namespace crescent::auth {

Verifier ServerCredentials::VerifierOf(std::string_view name, const UserEntry** entry) const {
  *entry = file_.FindUser(name);
  if (*entry != nullptr) return (*entry)->verifier;
  // Stable per name, so asking twice shows the same salt, as for a real user.
  Verifier mock;
  mock.salt = Hmac(mock_key_, "salt:" + std::string(name));
  mock.stored_key = Hmac(mock_key_, "stored:" + std::string(name));
  mock.server_key = Hmac(mock_key_, "server:" + std::string(name));
  return mock;
}

ServerHandshake::ServerHandshake(std::shared_ptr<const ServerCredentials> credentials,
                                 NonceSource nonces)
    : credentials_(std::move(credentials)), nonces_(std::move(nonces)) {}

std::string ServerHandshake::Step(std::string_view in) {
  switch (state_) {
    case State::kExpectClientFirst: return OnClientFirst(in);
    case State::kExpectClientFinal: return OnClientFinal(in);
    case State::kAuthenticated:
    case State::kFailed: break;
  }
  return Fail("authentication already ended on this connection");
}

std::string ServerHandshake::Fail(std::string message) {
  state_ = State::kFailed;
  entry_.reset();
  failure_ = Status(ErrorCode::kUnauthenticated, message);
  wire::ServerFinal final;
  final.code = ErrorCode::kUnauthenticated;
  final.message = std::move(message);
  return wire::Encode(final);
}

std::string ServerHandshake::OnClientFirst(std::string_view in) {
  std::optional<wire::ClientFirst> first = wire::DecodeClientFirst(in);
  if (!first) return Fail("malformed authentication message (expected the client's first)");
  const UserEntry* entry = nullptr;
  verifier_ = credentials_->VerifierOf(first->name, &entry);
  if (entry != nullptr) entry_ = *entry;
  first_ = std::move(*first);
  reply_.salt = verifier_.salt;
  reply_.nonce.client = first_.client_nonce;
  reply_.nonce.server = nonces_();
  state_ = State::kExpectClientFinal;
  return wire::Encode(reply_);
}

std::string ServerHandshake::OnClientFinal(std::string_view in) {
  std::optional<wire::ClientFinal> final = wire::DecodeClientFinal(in);
  if (!final) return Fail("malformed authentication message (expected the client's proof)");
  const std::string auth_message = wire::AuthMessage(first_, reply_);
  const Key client_signature = Hmac(verifier_.stored_key, auth_message);
  const Key client_key = Xor(final->proof, client_signature);
  // Every check runs whatever the others found, so the work does not say which failed.
  const bool proof_ok = Equal(Sha256(View(client_key)), verifier_.stored_key);
  const bool nonce_ok = Equal(final->nonce.client, reply_.nonce.client) &
                        Equal(final->nonce.server, reply_.nonce.server);
  if (!proof_ok || !nonce_ok || !entry_) return Fail(std::string(kUnknownTokenMessage));
  state_ = State::kAuthenticated;
  identity_ = Identity{first_.name, entry_->role, entry_->tenant};
  wire::ServerFinal ok;
  ok.server_signature = Hmac(verifier_.server_key, auth_message);
  ok.role = identity_.role;
  ok.tenant = identity_.tenant;
  return wire::Encode(ok);
}

ClientHandshake::ClientHandshake(Token token, NonceSource nonces)
    : token_(std::move(token)), nonces_(std::move(nonces)) {}

std::string ClientHandshake::Start() {
  first_.name = token_.name;
  first_.client_nonce = nonces_();
  reply_.reset();
  return wire::Encode(first_);
}

StatusOr<std::string> ClientHandshake::OnServerFirst(std::string_view in) {
  std::optional<wire::ServerFirst> reply = wire::DecodeServerFirst(in);
  if (!reply) {
    // The server may have refused the first message outright.
    if (std::optional<wire::ServerFinal> final = wire::DecodeServerFinal(in);
        final && final->code != ErrorCode::kOk) {
      return Status(final->code, final->message);
    }
    return Status(ErrorCode::kUnauthenticated, "the server's authentication reply is malformed");
  }
  if (!Equal(reply->nonce.client, first_.client_nonce)) {
    return Status(ErrorCode::kUnauthenticated,
                  "the server's authentication reply does not answer this connection");
  }
  reply_ = *reply;
  const std::string auth_message = wire::AuthMessage(first_, *reply_);
  const Key client_key = ClientKeyOf(token_.secret, reply_->salt);
  wire::ClientFinal final;
  final.nonce = reply_->nonce;
  final.proof = Xor(client_key, Hmac(Sha256(View(client_key)), auth_message));
  return wire::Encode(final);
}

StatusOr<Identity> ClientHandshake::OnServerFinal(std::string_view in) {
  if (!reply_) {
    return Status(ErrorCode::kInternal, "OnServerFinal before OnServerFirst succeeded");
  }
  std::optional<wire::ServerFinal> final = wire::DecodeServerFinal(in);
  if (!final) {
    return Status(ErrorCode::kUnauthenticated, "the server's authentication verdict is malformed");
  }
  if (final->code != ErrorCode::kOk) return Status(final->code, final->message);
  const Verifier mine = MakeVerifier(token_.secret, reply_->salt);
  if (!Equal(final->server_signature, Hmac(mine.server_key, wire::AuthMessage(first_, *reply_)))) {
    return Status(ErrorCode::kUnauthenticated,
                  "the server did not prove that it holds this token's verifier (is it this "
                  "cluster's?)");
  }
  return Identity{token_.name, final->role, final->tenant};
}

}  // namespace crescent::auth
