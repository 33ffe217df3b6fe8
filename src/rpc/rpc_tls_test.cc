// The control plane under TLS (tls.h, docs/security.md "TLS"), in one process
// over real sockets, with certificates made by the openssl CLI: concurrent
// callers share one TLS lean connection (its reader and writer on different
// threads) and each gets its own answer; an idle TLS connection stays usable,
// one the master closed for idleness is noticed and replaced; a client
// handshake that never comes is cut by the idle timeout; and the checks of
// the PEM files.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "rpc/rpc_test_util.h"
#include "rpc/server_metrics.h"
#include "rpc/tls.h"

namespace crescent::rpc::testing {
namespace {

using ::testing::HasSubstr;

class TlsRpcTest : public RpcTest {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(::testing::TempDir() + "crescent-tls-" + std::to_string(::getpid()));
    std::filesystem::create_directories(*dir_);
    const std::string script = "'" CRESCENT_SOURCE_DIR "/scripts/make_test_certs.sh' '" + *dir_ +
                               "' > '" + *dir_ + "/make_test_certs.log' 2>&1";
    ok_ = std::system(script.c_str()) == 0;
  }
  static void TearDownTestSuite() {
    std::filesystem::remove_all(*dir_);
    delete dir_;
  }
  void SetUp() override {
    ASSERT_TRUE(ok_) << "openssl failed, see " << *dir_ << "/make_test_certs.log";
  }

  static std::string File(const std::string& name) { return *dir_ + "/" + name; }
  static MasterServerOptions TlsServer() {
    MasterServerOptions o = DefaultServerOptions();
    o.tls.cert = File("server.crt");
    o.tls.key = File("server.key");
    return o;
  }
  static MasterClientOptions TlsClient() {
    MasterClientOptions o;
    o.tls.ca = File("ca.crt");
    return o;
  }
  // A raw TCP connection to the lean port that says nothing.
  int Raw() { return RawLean(20); }

  static std::string* dir_;
  static bool ok_;
};
std::string* TlsRpcTest::dir_ = nullptr;
bool TlsRpcTest::ok_ = false;

TEST_F(TlsRpcTest, ConcurrentCallersShareOneTlsConnection) {
  Start(TlsServer(), TlsClient());
  Mount();
  EXPECT_EQ(client_->ControlTarget(), "127.0.0.1:" + std::to_string(server_->control_port()));
  constexpr int kThreads = 8;
  constexpr int kPerThread = 150;
  EXPECT_EQ(CallsFromManyThreads(kThreads, kPerThread, ""), 0);
  EXPECT_EQ(server_->metrics().lean_connections(), 1);
  EXPECT_EQ(master_->Stats().objects, static_cast<uint64_t>(kThreads * kPerThread));
  EXPECT_GE(server_->metrics().lean_calls(), static_cast<uint64_t>(kThreads * kPerThread * 4));
  // The rest over gRPC, under TLS too.
  auto stats = client_->Stats();
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->objects, static_cast<uint64_t>(kThreads * kPerThread));
}

TEST_F(TlsRpcTest, IdleTlsConnectionsStayUsableAndClosedOnesAreReplaced) {
  MasterServerOptions options = TlsServer();
  options.limits.idle_timeout = std::chrono::milliseconds(300);
  MasterClientOptions client_options = TlsClient();
  client_options.attempts = 1;  // no retry may hide a call sent on a closed connection
  Start(options, client_options);
  Mount();
  ASSERT_TRUE(Put("k").ok());
  // Idle past the client's idle check (10 ms), within the master's timeout.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  uint64_t before = server_->metrics().lean_calls();
  auto exists = client_->Exists("k");
  ASSERT_TRUE(exists.ok()) << exists.status().ToString();
  EXPECT_EQ(server_->metrics().lean_calls(), before + 1);

  // A connection that never starts its handshake is closed as an idle one.
  const int silent = Raw();
  char c;
  EXPECT_EQ(::recv(silent, &c, 1, 0), 0) << "a silent connection stayed open";
  ::close(silent);
  // The client's connection was closed the same way; its next call reconnects.
  before = server_->metrics().lean_calls();
  exists = client_->Exists("k");
  ASSERT_TRUE(exists.ok()) << exists.status().ToString();
  EXPECT_TRUE(*exists);
  EXPECT_EQ(server_->metrics().lean_calls(), before + 1);
}

TEST_F(TlsRpcTest, BadFilesAreRefusedSayingWhich) {
  TlsFiles f{.ca = "", .cert = File("server.crt"), .key = File("ca.key"), .server_name = ""};
  StatusOr<TlsPem> pem = LoadServerTls(f);
  EXPECT_EQ(pem.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(pem.status().message(), HasSubstr("is not the key of the certificate"));
  f.key = File("server.key");
  f.ca = File("openssl.log");
  pem = LoadServerTls(f);
  EXPECT_THAT(pem.status().message(), HasSubstr("--tls-ca '" + File("openssl.log") + "'"));
  EXPECT_THAT(pem.status().message(), HasSubstr("holds no PEM certificate"));
  f.ca = File("ca.crt");
  pem = LoadServerTls(f);
  ASSERT_TRUE(pem.ok()) << pem.status().ToString();
  EXPECT_FALSE(pem->cert.empty());
  EXPECT_FALSE(pem->ca.empty());
  // Off without files; a client needs a CA for anything else.
  EXPECT_TRUE(LoadServerTls({}).ok());
  EXPECT_TRUE(LoadClientTls({}).ok());
  pem = LoadClientTls({.ca = "", .cert = "", .key = "", .server_name = "x"});
  EXPECT_THAT(pem.status().message(), HasSubstr("--tls-server-name needs --tls-ca"));
  MasterServerOptions bad = TlsServer();
  bad.tls.key = File("ca.key");
  auto m = master::MasterService::Create(config_);
  ASSERT_TRUE(m.ok());
  auto signer = transfer::CapabilitySigner::Create(kSecret);
  ASSERT_TRUE(signer.ok());
  auto server = MasterServer::Start(bad, **m, *signer);
  EXPECT_EQ(server.status().code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace crescent::rpc::testing
