// Fuzzes the server side of the authentication handshake (auth/handshake.h)
// and its message codec (auth/handshake_wire.h).
//
// Invariants:
//  - Whatever the client sends, every reply is one the client's decoder
//    accepts, at most kMaxHandshakeMessageBytes long: a ServerFirst exactly
//    when the server then waits for a proof, else a ServerFinal; a failing
//    ServerFinal is UNAUTHENTICATED, and once failed the server stays failed.
//  - Raw bytes never authenticate: the server reaches kAuthenticated only for
//    an honest client holding a token in the file, and then as that token's
//    name, role and tenant.
//  - A proof or nonce changed in flight fails, with the unknown-token message.
//  - An accepted client message re-encodes to the same bytes.
#include <memory>

#include "auth/handshake.h"
#include "fuzz_support.h"

namespace auth = crescent::auth;
namespace wire = crescent::auth::wire;
using crescent::ErrorCode;
using crescent::fuzz::FuzzInput;
using State = auth::ServerHandshake::State;

namespace {

auth::Key Filled(uint8_t b) {
  auth::Key k{};
  k.fill(b);
  return k;
}

const auth::Token& KnownToken() {
  static const auth::Token token{"app", Filled(0x42)};
  return token;
}

// One client (tenant t1) and one admin, with fixed salts and a fixed mock key, so
// that every run sees the same server.
std::shared_ptr<const auth::ServerCredentials> Credentials() {
  static const auto creds = [] {
    auth::AuthFile file;
    FUZZ_CHECK(file.SetTenantQuota("t1", 1000).ok());
    FUZZ_CHECK(
        file.AddUser("app", auth::UserEntry{auth::Role::kClient, "t1",
                                            auth::MakeVerifier(KnownToken().secret, Filled(1))})
            .ok());
    FUZZ_CHECK(file.AddUser("root", auth::UserEntry{auth::Role::kAdmin, "",
                                                    auth::MakeVerifier(Filled(7), Filled(2))})
                   .ok());
    return std::make_shared<const auth::ServerCredentials>(std::move(file), Filled(3));
  }();
  return creds;
}

// Checks a reply against the state the server says it is in.
void CheckReply(const auth::ServerHandshake& server, const std::string& reply) {
  FUZZ_CHECK(reply.size() <= wire::kMaxHandshakeMessageBytes);
  if (server.state() == State::kExpectClientFinal) {
    FUZZ_CHECK(wire::DecodeServerFirst(reply).has_value());
    return;
  }
  std::optional<wire::ServerFinal> final = wire::DecodeServerFinal(reply);
  FUZZ_CHECK(final.has_value());
  FUZZ_CHECK(wire::Encode(*final) == reply);
  if (server.state() == State::kFailed) {
    FUZZ_CHECK(final->code == ErrorCode::kUnauthenticated);
    FUZZ_CHECK(server.failure().code() == ErrorCode::kUnauthenticated);
  } else {
    FUZZ_CHECK(server.state() == State::kAuthenticated && final->code == ErrorCode::kOk);
  }
}

// Up to three raw client messages.
void RawMessages(FuzzInput& in) {
  auth::Key nonce{};
  in.TakeBytes(nonce.data(), nonce.size());
  auth::ServerHandshake server(Credentials(), [nonce] { return nonce; });
  for (int i = 0; i < 3 && in.remaining() > 0; ++i) {
    const std::string msg = in.TakeString(255);
    if (std::optional<wire::ClientFirst> first = wire::DecodeClientFirst(msg)) {
      FUZZ_CHECK(wire::Encode(*first) == msg);
    }
    if (std::optional<wire::ClientFinal> final = wire::DecodeClientFinal(msg)) {
      FUZZ_CHECK(wire::Encode(*final) == msg);
    }
    const State before = server.state();
    const std::string reply = server.Step(msg);
    CheckReply(server, reply);
    FUZZ_CHECK(server.state() != State::kAuthenticated);
    if (before == State::kFailed) FUZZ_CHECK(server.state() == State::kFailed);
  }
}

// An honest client, its proof or nonce perhaps changed by one byte on the way.
void HonestClient(FuzzInput& in) {
  auth::Key client_nonce{}, server_nonce{};
  in.TakeBytes(client_nonce.data(), client_nonce.size());
  in.TakeBytes(server_nonce.data(), server_nonce.size());
  const bool known = in.Take<uint8_t>() & 1;
  const size_t at = in.Take<uint8_t>();
  const uint8_t flip = in.Take<uint8_t>();
  auth::Token token = known ? KnownToken() : auth::Token{in.TakeString(64), Filled(9)};
  if (!auth::CheckName("token name", token.name).ok()) token.name = "ghost";
  auth::ClientHandshake client(token, [client_nonce] { return client_nonce; });
  auth::ServerHandshake server(Credentials(), [server_nonce] { return server_nonce; });
  const std::string first_reply = server.Step(client.Start());
  CheckReply(server, first_reply);
  FUZZ_CHECK(server.state() == State::kExpectClientFinal);
  crescent::StatusOr<std::string> proof = client.OnServerFirst(first_reply);
  FUZZ_CHECK(proof.ok());
  std::string sent = *proof;
  if (at > 0 && at < sent.size()) sent[at] = static_cast<char>(sent[at] ^ flip);
  const std::string verdict = server.Step(sent);
  CheckReply(server, verdict);
  const bool honest = known && sent == *proof;
  FUZZ_CHECK((server.state() == State::kAuthenticated) == honest);
  crescent::StatusOr<auth::Identity> id = client.OnServerFinal(verdict);
  FUZZ_CHECK(id.ok() == honest);
  if (honest) {
    FUZZ_CHECK(server.identity().name == "app" && server.identity().tenant == "t1");
    FUZZ_CHECK(id->role == auth::Role::kClient && id->tenant == "t1");
  } else {
    FUZZ_CHECK(server.failure().message() == auth::kUnknownTokenMessage);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzInput in(data, size);
  if (in.Take<uint8_t>() & 1) {
    HonestClient(in);
  } else {
    RawMessages(in);
  }
  return 0;
}
