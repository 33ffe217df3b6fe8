#include "auth/handshake.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace crescent::auth {
namespace {

using testing::HasSubstr;
using State = ServerHandshake::State;

class HandshakeTest : public testing::Test {
 protected:
  void SetUp() override {
    AuthFile file;
    ASSERT_TRUE(file.SetTenantQuota("t1", 1 << 20).ok());
    app_ = Add(file, "app", Role::kClient, "t1");
    root_ = Add(file, "root", Role::kAdmin, "");
    creds_ = std::make_shared<ServerCredentials>(std::move(file));
  }

  static Token Add(AuthFile& file, const std::string& name, Role role, const std::string& tenant) {
    Token t = NewToken(name);
    EXPECT_TRUE(
        file.AddUser(name, UserEntry{role, tenant, MakeVerifier(t.secret, RandomKey())}).ok());
    return t;
  }

  // Runs the whole exchange; the client's verdict.
  StatusOr<Identity> Run(const Token& token, ServerHandshake& server) {
    ClientHandshake client(token);
    const std::string first_reply = server.Step(client.Start());
    StatusOr<std::string> final = client.OnServerFirst(first_reply);
    if (!final.ok()) return final.status();
    return client.OnServerFinal(server.Step(*final));
  }

  Token app_, root_;
  std::shared_ptr<const ServerCredentials> creds_;
};

TEST_F(HandshakeTest, AValidTokenAuthenticatesBothWays) {
  ServerHandshake server(creds_);
  StatusOr<Identity> id = Run(app_, server);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_EQ(id->name, "app");
  EXPECT_EQ(id->role, Role::kClient);
  EXPECT_EQ(id->tenant, "t1");
  ASSERT_EQ(server.state(), State::kAuthenticated);
  EXPECT_EQ(server.identity().name, "app");
  EXPECT_EQ(server.identity().tenant, "t1");

  ServerHandshake admin(creds_);
  id = Run(root_, admin);
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(id->role, Role::kAdmin);
  EXPECT_EQ(admin.identity().tenant, "");
}

TEST_F(HandshakeTest, AWrongSecretAndAnUnknownNameFailAlike) {
  Token wrong = app_;
  wrong.secret[0] ^= 1;
  Token ghost = NewToken("ghost");
  for (const Token& t : {wrong, ghost}) {
    ServerHandshake server(creds_);
    StatusOr<Identity> id = Run(t, server);
    ASSERT_FALSE(id.ok());
    EXPECT_EQ(id.status().code(), ErrorCode::kUnauthenticated);
    EXPECT_EQ(id.status().message(), kUnknownTokenMessage);
    EXPECT_EQ(server.state(), State::kFailed);
    EXPECT_EQ(server.failure().message(), kUnknownTokenMessage);
  }
}

TEST_F(HandshakeTest, AnUnknownNameGetsAStableSaltLikeAKnownOne) {
  auto salt_for = [&](const std::string& name) {
    ServerHandshake server(creds_);
    ClientHandshake client(NewToken(name));
    std::optional<wire::ServerFirst> reply = wire::DecodeServerFirst(server.Step(client.Start()));
    EXPECT_TRUE(reply.has_value());
    return reply ? reply->salt : Key{};
  };
  EXPECT_EQ(salt_for("ghost"), salt_for("ghost"));
  EXPECT_NE(salt_for("ghost"), salt_for("ghost2"));
  EXPECT_EQ(salt_for("app"), creds_->file().FindUser("app")->verifier.salt);
}

TEST_F(HandshakeTest, TheVerifierAloneCannotAuthenticate) {
  // An attacker holding the auth file presents StoredKey (or ServerKey) as if
  // it were ClientKey: the proof it can build is refused.
  const Verifier& v = creds_->file().FindUser("app")->verifier;
  for (const Key& guess : {v.stored_key, v.server_key}) {
    ServerHandshake server(creds_);
    ClientHandshake client(app_);
    wire::ClientFirst first{"app", RandomKey()};
    std::optional<wire::ServerFirst> reply =
        wire::DecodeServerFirst(server.Step(wire::Encode(first)));
    ASSERT_TRUE(reply);
    wire::ClientFinal final;
    final.nonce = reply->nonce;
    final.proof = Xor(guess, Hmac(v.stored_key, wire::AuthMessage(first, *reply)));
    std::optional<wire::ServerFinal> verdict =
        wire::DecodeServerFinal(server.Step(wire::Encode(final)));
    ASSERT_TRUE(verdict);
    EXPECT_EQ(verdict->code, ErrorCode::kUnauthenticated);
    EXPECT_EQ(server.state(), State::kFailed);
  }
}

TEST_F(HandshakeTest, AProofIsBoundToItsConnectionsNonces) {
  // A proof recorded on one connection, replayed on another, is refused: the
  // second server's nonce differs.
  ServerHandshake first_server(creds_);
  ClientHandshake client(app_);
  const std::string hello = client.Start();
  StatusOr<std::string> proof = client.OnServerFirst(first_server.Step(hello));
  ASSERT_TRUE(proof.ok());
  ServerHandshake replayed(creds_);
  replayed.Step(hello);
  std::optional<wire::ServerFinal> verdict = wire::DecodeServerFinal(replayed.Step(*proof));
  ASSERT_TRUE(verdict);
  EXPECT_EQ(verdict->code, ErrorCode::kUnauthenticated);
  EXPECT_EQ(verdict->message, kUnknownTokenMessage);
}

TEST_F(HandshakeTest, MalformedOrOutOfOrderMessagesFailTheHandshake) {
  ClientHandshake client(app_);
  const std::string hello = client.Start();
  for (const std::string& bad : {std::string(), std::string("\x01"), hello + "x",
                                 hello.substr(0, hello.size() - 1), std::string(600, '\x03')}) {
    ServerHandshake server(creds_);
    std::optional<wire::ServerFinal> verdict = wire::DecodeServerFinal(server.Step(bad));
    ASSERT_TRUE(verdict);
    EXPECT_EQ(verdict->code, ErrorCode::kUnauthenticated);
    EXPECT_THAT(verdict->message, HasSubstr("malformed authentication message"));
    EXPECT_EQ(server.state(), State::kFailed);
    // Once failed it stays failed.
    server.Step(hello);
    EXPECT_EQ(server.state(), State::kFailed);
  }
  ServerHandshake server(creds_);
  server.Step(hello);
  server.Step(hello);  // a second ClientFirst where the proof belongs
  EXPECT_EQ(server.state(), State::kFailed);
  ServerHandshake done(creds_);
  ASSERT_TRUE(Run(app_, done).ok());
  done.Step(hello);  // nothing after the end
  EXPECT_EQ(done.state(), State::kFailed);
}

TEST_F(HandshakeTest, TheClientRefusesAServerThatProvesNothing) {
  // A server that holds another verifier for the name (not this cluster's).
  AuthFile other;
  ASSERT_TRUE(
      other.AddUser("app", UserEntry{Role::kClient, "", MakeVerifier(RandomKey(), RandomKey())})
          .ok());
  // It cannot build a signature: ask a real server for a verdict, then forge
  // the signature byte by byte.
  ServerHandshake server(creds_);
  ClientHandshake client(app_);
  StatusOr<std::string> proof = client.OnServerFirst(server.Step(client.Start()));
  ASSERT_TRUE(proof.ok());
  std::optional<wire::ServerFinal> verdict = wire::DecodeServerFinal(server.Step(*proof));
  ASSERT_TRUE(verdict && verdict->code == ErrorCode::kOk);
  verdict->server_signature[5] ^= 0x40;
  StatusOr<Identity> id = client.OnServerFinal(wire::Encode(*verdict));
  EXPECT_EQ(id.status().code(), ErrorCode::kUnauthenticated);
  EXPECT_THAT(id.status().message(), HasSubstr("did not prove that it holds"));

  // A ServerFirst that does not echo the client's nonce, and garbage.
  ClientHandshake c2(app_);
  std::optional<wire::ClientFirst> hello = wire::DecodeClientFirst(c2.Start());
  ASSERT_TRUE(hello);
  wire::ServerFirst wrong;
  wrong.nonce.client = hello->client_nonce;
  wrong.nonce.client[0] ^= 1;
  EXPECT_THAT(c2.OnServerFirst(wire::Encode(wrong)).status().message(),
              HasSubstr("does not answer this connection"));
  EXPECT_THAT(c2.OnServerFirst("junk").status().message(), HasSubstr("malformed"));
  EXPECT_EQ(c2.OnServerFinal("junk").status().code(), ErrorCode::kInternal);
}

TEST_F(HandshakeTest, ARevokedTokenFailsOnCredentialsLoadedAfter) {
  AuthFile file = creds_->file();
  ASSERT_TRUE(file.RemoveUser("app").ok());
  auto reloaded = std::make_shared<ServerCredentials>(std::move(file));
  ServerHandshake server(reloaded);
  EXPECT_EQ(Run(app_, server).status().code(), ErrorCode::kUnauthenticated);
  ServerHandshake root(reloaded);
  EXPECT_TRUE(Run(root_, root).ok());
}

// Known answers, computed apart from this code (Python's hmac and hashlib over
// the scheme docs/security.md states), and the messages' bytes: a change to
// the key schedule or the encoding breaks every token or client out there.
TEST(HandshakeWireTest, KnownAnswersAndGoldenBytes) {
  auto filled = [](uint8_t b) {
    Key k{};
    k.fill(b);
    return k;
  };
  const Token token{"app", filled(0x42)};
  const Key salt = filled(0x01);
  const Verifier v = MakeVerifier(token.secret, salt);
  EXPECT_EQ(ToHex(View(ClientKeyOf(token.secret, salt))),
            "ba8fc25805c47c0df11f4c0fa06bfbe2e8bb2cb648ff499dbd0278df94bb7a0b");
  EXPECT_EQ(ToHex(View(v.stored_key)),
            "495355f76b3384dea09002748a0be2f2b6a9135a369eff5f7eaa837b311f91f5");
  EXPECT_EQ(ToHex(View(v.server_key)),
            "f56ff5a9d67b6c1e2a4a507e65f3c9a637bd8610655151c679a4d1a370e577fe");

  AuthFile file;
  ASSERT_TRUE(file.AddUser("app", UserEntry{Role::kClient, "", v}).ok());
  auto creds = std::make_shared<ServerCredentials>(std::move(file), filled(3));
  ClientHandshake client(token, [&] { return filled(0x11); });
  ServerHandshake server(creds, [&] { return filled(0x22); });
  const std::string first = client.Start();
  EXPECT_EQ(ToHex(first), "0103617070" + std::string(64, '1'));
  const std::string reply = server.Step(first);
  EXPECT_EQ(ToHex(reply), "02" + ToHex(View(salt)) + std::string(64, '1') + std::string(64, '2'));
  StatusOr<std::string> final = client.OnServerFirst(reply);
  ASSERT_TRUE(final.ok());
  EXPECT_EQ(ToHex(*final), "03" + std::string(64, '1') + std::string(64, '2') +
                               "1397d5439957127779ffe36d987dc19496828a35e11ed56561d7641b2a2e9913");
  const std::string verdict = server.Step(*final);
  EXPECT_EQ(ToHex(verdict),
            "0400"
            "7f4701b6fb34a4812e9003bb09b5b4bcff60ddc7603bbe5c51db24b71e222806"
            "0200");
  EXPECT_TRUE(client.OnServerFinal(verdict).ok());

  // Nothing that crossed the wire holds the secret or ClientKey.
  const std::string wire_bytes = first + reply + *final + verdict;
  EXPECT_EQ(wire_bytes.find(View(token.secret)), std::string::npos);
  EXPECT_EQ(wire_bytes.find(View(ClientKeyOf(token.secret, salt))), std::string::npos);
}

TEST(HandshakeWireTest, MessagesRoundTripAndRefuseOtherEncodings) {
  wire::ClientFirst cf{"node-1", RandomKey()};
  std::string bytes = wire::Encode(cf);
  std::optional<wire::ClientFirst> cf2 = wire::DecodeClientFirst(bytes);
  ASSERT_TRUE(cf2);
  EXPECT_EQ(cf2->name, cf.name);
  EXPECT_EQ(cf2->client_nonce, cf.client_nonce);
  EXPECT_FALSE(wire::DecodeServerFirst(bytes));  // wrong kind
  EXPECT_FALSE(wire::DecodeClientFirst(wire::Encode(wire::ClientFirst{"", RandomKey()})));
  EXPECT_FALSE(
      wire::DecodeClientFirst(wire::Encode(wire::ClientFirst{std::string(65, 'a'), RandomKey()})));

  wire::ServerFinal bad;
  bad.code = ErrorCode::kUnauthenticated;
  bad.message = std::string(1000, 'm');
  std::optional<wire::ServerFinal> bad2 = wire::DecodeServerFinal(wire::Encode(bad));
  ASSERT_TRUE(bad2);
  EXPECT_EQ(bad2->message.size(), wire::kMaxMessageBytes);
  wire::ServerFinal ok;
  ok.role = Role::kNode;
  bytes = wire::Encode(ok);
  ASSERT_TRUE(wire::DecodeServerFinal(bytes));
  bytes[2 + 32] = 9;  // no such role
  EXPECT_FALSE(wire::DecodeServerFinal(bytes));
  EXPECT_LE(wire::Encode(bad).size(), wire::kMaxHandshakeMessageBytes);
}

}  // namespace
}  // namespace crescent::auth
