// Authentication on the lean control protocol (control_server.h with
// credentials, ControlChannel::Connect with a token; docs/security.md), over
// real sockets: a connection authenticates once, by the handshake, and is then
// served as its token's role and tenant; a call before that, an unknown or
// revoked token, and a malformed handshake are refused UNAUTHENTICATED and the
// connection is closed. A MasterClient with a token sends every call over that
// connection; without one, gRPC refuses all but ControlEndpoints.
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>

#include "auth/handshake.h"
#include "auth/bearer.h"
#include "rpc/control_channel.h"
#include "rpc/master.grpc.pb.h"
#include "rpc/messages.pb.h"
#include "rpc/rpc_test_util.h"
#include "rpc/server_metrics.h"

namespace crescent::rpc::testing {
namespace {

using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

Clock::time_point In(int ms) { return Clock::now() + std::chrono::milliseconds(ms); }

class AuthTest : public RpcTest {
 protected:
  void SetUp() override {
    ASSERT_TRUE(file_.SetTenantQuota("t1", 1 << 30).ok());
    app_ = Add("app", auth::Role::kClient, "t1");
    node_ = Add("node-1", auth::Role::kNode, "");
    admin_ = Add("root", auth::Role::kAdmin, "");
  }

  auth::Token Add(const std::string& name, auth::Role role, const std::string& tenant) {
    auth::Token t = auth::NewToken(name);
    EXPECT_TRUE(
        file_.AddUser(name, {role, tenant, auth::MakeVerifier(t.secret, auth::RandomKey())}).ok());
    return t;
  }

  void StartWithAuth() {
    MasterServerOptions o = DefaultServerOptions();
    o.credentials = std::make_shared<auth::ServerCredentials>(file_);
    Start(o);
  }

  uint64_t Count(RpcServerMetrics::AuthResult r) const {
    return server_->metrics().authentications(r);
  }

  std::string Target() const { return "127.0.0.1:" + std::to_string(server_->control_port()); }

  StatusOr<std::unique_ptr<ControlChannel>> Connect(const auth::Token* token) {
    return ControlChannel::Connect(Target(), In(10'000), nullptr, std::chrono::microseconds(0),
                                   64 << 20, token);
  }

  static Status Exists(ControlChannel& c, const std::string& key) {
    proto::KeyRequest req;
    req.set_key(key);
    proto::ExistsResponse resp;
    return c.Call(ControlMethod::kExists, req, &resp, In(10'000));
  }

  auth::AuthFile file_;
  auth::Token app_, node_, admin_;
};

TEST_F(AuthTest, AValidTokenAuthenticatesTheConnectionOnce) {
  StartWithAuth();
  auto channel = Connect(&app_);
  ASSERT_TRUE(channel.ok()) << channel.status().ToString();
  ControlChannel& c = **channel;
  ASSERT_TRUE(c.identity().has_value());
  EXPECT_EQ(c.identity()->name, "app");
  EXPECT_EQ(c.identity()->role, auth::Role::kClient);
  EXPECT_EQ(c.identity()->tenant, "t1");
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(Exists(c, "k").ok());  // no handshake per call

  auto node = Connect(&node_);
  ASSERT_TRUE(node.ok()) << node.status().ToString();
  EXPECT_EQ((*node)->identity()->role, auth::Role::kNode);
  EXPECT_EQ((*node)->identity()->tenant, "");

  // A second handshake on the same connection is refused, and ends it.
  std::string answer;
  Status s = c.CallRaw(ControlMethod::kAuthenticate, "x", &answer, In(10'000));
  EXPECT_EQ(s.code(), ErrorCode::kUnauthenticated);
  EXPECT_THAT(s.message(), HasSubstr("already authenticated"));
  EXPECT_EQ(Exists(c, "k").code(), ErrorCode::kUnavailable);
  EXPECT_EQ(Count(RpcServerMetrics::AuthResult::kOk), 2u);
  EXPECT_EQ(Count(RpcServerMetrics::AuthResult::kFailed), 1u);
  EXPECT_EQ(Count(RpcServerMetrics::AuthResult::kRefused), 0u);
}

TEST_F(AuthTest, ACallBeforeAuthenticatingIsRefusedAndTheConnectionClosed) {
  StartWithAuth();
  auto channel = Connect(nullptr);  // Hello needs no token
  ASSERT_TRUE(channel.ok()) << channel.status().ToString();
  EXPECT_FALSE((*channel)->identity().has_value());
  Status s = Exists(**channel, "k");
  EXPECT_EQ(s.code(), ErrorCode::kUnauthenticated);
  EXPECT_THAT(s.message(), HasSubstr("authenticate the connection first"));
  EXPECT_EQ(Exists(**channel, "k").code(), ErrorCode::kUnavailable);
  EXPECT_EQ(Count(RpcServerMetrics::AuthResult::kRefused), 1u);
}

TEST_F(AuthTest, AnUnknownOrRevokedTokenIsRefused) {
  auth::Token wrong = app_;
  wrong.secret[31] ^= 0x80;
  const auth::Token ghost = auth::NewToken("ghost");
  StartWithAuth();
  for (const auth::Token* t : std::vector<const auth::Token*>{&wrong, &ghost}) {
    auto channel = Connect(t);
    ASSERT_FALSE(channel.ok()) << t->name;
    EXPECT_EQ(channel.status().code(), ErrorCode::kUnauthenticated);
    EXPECT_EQ(channel.status().message(), auth::kUnknownTokenMessage);
  }
  EXPECT_EQ(Count(RpcServerMetrics::AuthResult::kFailed), 2u);
  EXPECT_EQ(Count(RpcServerMetrics::AuthResult::kOk), 0u);
  // Revoked: a master started on the file without it.
  ASSERT_TRUE(file_.RemoveUser("app").ok());
  StartWithAuth();
  EXPECT_EQ(Connect(&app_).status().code(), ErrorCode::kUnauthenticated);
  EXPECT_TRUE(Connect(&node_).ok());
}

// New credentials (a reloaded auth file) apply to the next handshake, and close
// an open connection whose token they no longer hold on its next call.
TEST_F(AuthTest, NewCredentialsCloseTheConnectionsOfRevokedTokens) {
  const auth::Token other = Add("other", auth::Role::kClient, "t1");
  StartWithAuth();
  auto app = Connect(&app_);
  auto node = Connect(&node_);
  auto kept = Connect(&other);
  ASSERT_TRUE(app.ok() && node.ok() && kept.ok());
  ASSERT_TRUE(Exists(**app, "k").ok());

  ASSERT_TRUE(file_.RemoveUser("app").ok());  // revoked
  ASSERT_TRUE(file_.RemoveUser("node-1").ok());
  const auth::Token node_again = Add("node-1", auth::Role::kNode, "");  // and given a new token
  server_->SetCredentials(std::make_shared<auth::ServerCredentials>(file_));

  Status s = Exists(**app, "k");
  EXPECT_EQ(s.code(), ErrorCode::kUnauthenticated);
  EXPECT_THAT(s.message(), HasSubstr("token was revoked"));
  EXPECT_EQ(Exists(**app, "k").code(), ErrorCode::kUnavailable);  // closed
  EXPECT_EQ(Exists(**node, "k").code(), ErrorCode::kUnauthenticated);
  EXPECT_TRUE(Exists(**kept, "k").ok());  // untouched by the reload
  EXPECT_TRUE(Exists(**kept, "k").ok());
  EXPECT_EQ(Connect(&app_).status().code(), ErrorCode::kUnauthenticated);
  EXPECT_EQ(Connect(&node_).status().code(), ErrorCode::kUnauthenticated);
  EXPECT_TRUE(Connect(&node_again).ok());

  // Without credentials nothing is checked any more.
  server_->SetCredentials(nullptr);
  auto plain = Connect(nullptr);
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE(Exists(**plain, "k").ok());
  EXPECT_TRUE(Exists(**kept, "k").ok());
}

TEST_F(AuthTest, AMalformedHandshakeIsRefusedAndTheConnectionClosed) {
  StartWithAuth();
  auto channel = Connect(nullptr);
  ASSERT_TRUE(channel.ok());
  std::string answer;
  ASSERT_TRUE(
      (*channel)->CallRaw(ControlMethod::kAuthenticate, "\x01garbage", &answer, In(10'000)).ok());
  std::optional<auth::wire::ServerFinal> verdict = auth::wire::DecodeServerFinal(answer);
  ASSERT_TRUE(verdict.has_value());
  EXPECT_EQ(verdict->code, ErrorCode::kUnauthenticated);
  EXPECT_THAT(verdict->message, HasSubstr("malformed authentication message"));
  EXPECT_EQ(Exists(**channel, "k").code(), ErrorCode::kUnavailable);
}

TEST_F(AuthTest, WithoutCredentialsNothingIsCheckedAndATokenIsRefused) {
  Start();
  auto plain = Connect(nullptr);
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE(Exists(**plain, "k").ok());
  auto with_token = Connect(&app_);
  EXPECT_EQ(with_token.status().code(), ErrorCode::kUnsupported);
  EXPECT_THAT(with_token.status().message(), HasSubstr("authenticates nobody"));
}

// MasterClient with a token: every call over the authenticated lean
// connection (the gRPC-only ones as kCall, heartbeats included), none over
// gRPC, which a master with credentials refuses but for ControlEndpoints.
TEST_F(AuthTest, ATokenCarriesEveryCallAndGrpcIsRefusedWithoutOne) {
  MasterServerOptions o = DefaultServerOptions();
  o.credentials = std::make_shared<auth::ServerCredentials>(file_);
  MasterClientOptions with_token;
  with_token.token = auth::FormatToken(admin_);  // every role's calls
  ASSERT_NO_FATAL_FAILURE(Start(o, with_token));
  ASSERT_NO_FATAL_FAILURE(Mount());  // gRPC-only: MountSegment as kCall
  EXPECT_TRUE(client_->Heartbeat("node-a").ok());
  ASSERT_TRUE(Put("k1").ok());
  StatusOr<bool> exists = client_->Exists("k1");
  ASSERT_TRUE(exists.ok()) << exists.status().ToString();
  EXPECT_TRUE(*exists);
  StatusOr<std::vector<std::string>> keys = client_->List("", 10);
  ASSERT_TRUE(keys.ok()) << keys.status().ToString();
  EXPECT_EQ(*keys, std::vector<std::string>{"k1"});
  StatusOr<ClusterStats> stats = client_->Stats();
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->objects, 1u);
  EXPECT_TRUE(client_->Remove("k1", false).ok());
  EXPECT_FALSE(client_->ControlTarget().empty());
  EXPECT_EQ(Count(RpcServerMetrics::AuthResult::kOk), 1u);  // one connection, one handshake

  // Without a token: the lean protocol and gRPC (its port and the Liveness
  // service's) alike refuse every call but ControlEndpoints.
  MasterClientOptions plain;
  plain.address = "127.0.0.1:" + std::to_string(server_->port());
  plain.attempts = 1;
  auto bare = MasterClient::Create(plain);
  ASSERT_TRUE(bare.ok());
  StatusOr<bool> refused = (*bare)->Exists("k1");
  EXPECT_EQ(refused.status().code(), ErrorCode::kUnauthenticated);
  EXPECT_THAT(refused.status().message(), HasSubstr("authenticate the connection first"));
  auto mounted = (*bare)->MountSegment(Spec("seg-evil", "evil"));
  EXPECT_EQ(mounted.status().code(), ErrorCode::kUnauthenticated);
  EXPECT_THAT(mounted.status().message(), HasSubstr("authorization: Bearer"));
  EXPECT_EQ((*bare)->Heartbeat("node-a").code(), ErrorCode::kUnauthenticated);
  EXPECT_EQ((*bare)->Stats().status().code(), ErrorCode::kUnauthenticated);
  EXPECT_EQ((*bare)->RemoveAll(true).status().code(), ErrorCode::kUnauthenticated);
  plain.lean_control = false;  // the hot calls over gRPC: refused too
  auto grpc_only = MasterClient::Create(plain);
  ASSERT_TRUE(grpc_only.ok());
  EXPECT_EQ((*grpc_only)->Exists("k1").status().code(), ErrorCode::kUnauthenticated);
  EXPECT_EQ((*grpc_only)->PutStart("k2", 10, {}).status().code(), ErrorCode::kUnauthenticated);
}

// Each call is served only to the roles that may make it (access.h): the
// others get PERMISSION_DENIED naming the call and the role, and their
// connection goes on.
TEST_F(AuthTest, EachRoleIsServedOnlyItsCalls) {
  StartWithAuth();
  auto node = Connect(&node_);
  auto app = Connect(&app_);
  auto admin = Connect(&admin_);
  ASSERT_TRUE(node.ok() && app.ok() && admin.ok());
  Status s = Exists(**node, "k");  // a node reads no keys
  EXPECT_EQ(s.code(), ErrorCode::kPermissionDenied);
  EXPECT_THAT(s.message(), HasSubstr("Exists needs the client or admin role"));
  EXPECT_THAT(s.message(), HasSubstr("token 'node-1' has the node role"));
  EXPECT_TRUE(Exists(**app, "k").ok());
  EXPECT_TRUE(Exists(**admin, "k").ok());

  // Snapshot (a kCall row): the admin role only.
  auto snapshot = [](ControlChannel& c) {
    std::string answer;
    return c.CallRaw(ControlMethod::kCall,
                     std::string(1, static_cast<char>(RpcMethod::kSnapshot)), &answer,
                     In(10'000));
  };
  s = snapshot(**app);
  EXPECT_EQ(s.code(), ErrorCode::kPermissionDenied);
  EXPECT_THAT(s.message(), HasSubstr("Snapshot needs the admin role"));
  EXPECT_EQ(snapshot(**node).code(), ErrorCode::kPermissionDenied);
  EXPECT_NE(snapshot(**admin).code(), ErrorCode::kPermissionDenied);
  // A refusal leaves the connection open, and is counted as the call's error.
  EXPECT_TRUE(Exists(**app, "k").ok());
  EXPECT_EQ(server_->metrics().Errors(RpcMethod::kExists, ErrorCode::kPermissionDenied), 1u);
  EXPECT_EQ(server_->metrics().Errors(RpcMethod::kSnapshot, ErrorCode::kPermissionDenied), 2u);
}

// A token in a gRPC call's metadata is refused off TLS (it crossed the wire in
// clear), and so is a call without one: the message says how to send it.
TEST_F(AuthTest, GrpcRefusesABearerTokenOffTls) {
  StartWithAuth();
  auto stub = Master::NewStub(grpc::CreateChannel(
      "127.0.0.1:" + std::to_string(server_->port()), grpc::InsecureChannelCredentials()));
  proto::StatsResponse stats;
  grpc::ClientContext bare;
  grpc::Status s = stub->Stats(&bare, proto::Empty(), &stats);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(s.error_message(), HasSubstr("authorization: Bearer"));
  grpc::ClientContext with_token;
  with_token.AddMetadata(std::string(auth::kBearerHeader), "Bearer " + auth::FormatToken(admin_));
  s = stub->Stats(&with_token, proto::Empty(), &stats);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(s.error_message(), HasSubstr("needs TLS"));
  EXPECT_EQ(Count(RpcServerMetrics::AuthResult::kRefused), 2u);
}

TEST_F(AuthTest, AClientTokenIsCheckedBeforeAnyCall) {
  MasterClientOptions o;
  o.address = "127.0.0.1:1";
  o.token = "not a token";
  EXPECT_EQ(MasterClient::Create(o).status().code(), ErrorCode::kUnauthenticated);
  o.token = auth::FormatToken(app_);
  o.lean_control = false;
  auto refused = MasterClient::Create(o);
  EXPECT_EQ(refused.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(refused.status().message(), HasSubstr("lean control protocol"));
  // A master with credentials needs its lean port.
  MasterServerOptions so = DefaultServerOptions();
  so.credentials = std::make_shared<auth::ServerCredentials>(file_);
  so.control_port = -1;
  auto m = master::MasterService::Create(config_);
  ASSERT_TRUE(m.ok());
  auto signer = transfer::CapabilitySigner::Create(kSecret);
  ASSERT_TRUE(signer.ok());
  auto server = MasterServer::Start(so, **m, *signer);
  EXPECT_EQ(server.status().code(), ErrorCode::kInvalidArgument);
}

TEST_F(AuthTest, AnUnknownTokenFailsTheCallNotFallsBackToGrpc) {
  MasterServerOptions o = DefaultServerOptions();
  o.credentials = std::make_shared<auth::ServerCredentials>(file_);
  MasterClientOptions c;
  c.token = auth::FormatToken(auth::NewToken("ghost"));
  c.attempts = 1;
  ASSERT_NO_FATAL_FAILURE(Start(o, c));
  StatusOr<bool> exists = client_->Exists("k");
  EXPECT_EQ(exists.status().code(), ErrorCode::kUnauthenticated);
  EXPECT_THAT(exists.status().message(), HasSubstr("refused this client's token"));
  EXPECT_THAT(exists.status().message(), HasSubstr("unknown token"));
  EXPECT_EQ(client_->Stats().status().code(), ErrorCode::kUnauthenticated);
}

TEST_F(AuthTest, AKCallFrameNamesAKnownRow) {
  StartWithAuth();
  auto channel = Connect(&app_);
  ASSERT_TRUE(channel.ok());
  std::string answer;
  Status s = (*channel)->CallRaw(ControlMethod::kCall, "", &answer, In(10'000));
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  s = (*channel)->CallRaw(ControlMethod::kCall, std::string(1, '\xff'), &answer, In(10'000));
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("unknown call number 255"));
  // The connection goes on.
  proto::ListSegmentsResponse segments;
  ASSERT_TRUE((*channel)
                  ->CallRaw(ControlMethod::kCall,
                            std::string(1, static_cast<char>(RpcMethod::kListSegments)), &answer,
                            In(10'000))
                  .ok());
  EXPECT_TRUE(segments.ParseFromString(answer));
  EXPECT_TRUE(Exists(**channel, "k").ok());
}

}  // namespace
}  // namespace crescent::rpc::testing
