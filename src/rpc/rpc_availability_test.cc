// The control plane's part of availability: clients of a stopping master get
// UNAVAILABLE (retryable), unreachable nodes are reported and skipped, a
// Unix socket path the kernel cannot take is refused up front, naming the
// limit, and the gRPC method paths that earlier builds call still answer.
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "common/listen_check.h"
#include "rpc/messages.pb.h"
#include "rpc/rpc_test_util.h"

namespace crescent::rpc::testing {
namespace {

using master::PutConfig;

class RpcAvailabilityTest : public RpcTest {
 protected:
  void SetUp() override { Start(); }
};

TEST_F(RpcAvailabilityTest, ADrainingMasterAnswersClientsUnavailableAndStillServesItsNodes) {
  Mount();
  ASSERT_TRUE(Put("before").ok());
  server_->BeginDrain();
  auto put = client_->PutStart("k", 100, {});
  EXPECT_EQ(put.status().code(), ErrorCode::kUnavailable) << put.status().ToString();
  EXPECT_NE(put.status().message().find("shutting down"), std::string::npos)
      << put.status().ToString();
  EXPECT_EQ(client_->GetReplicaList("before").status().code(), ErrorCode::kUnavailable);
  auto exists = client_->BatchExists(Keys("before", 1));
  EXPECT_EQ(exists.status().code(), ErrorCode::kUnavailable);
  // The node shutting down with it still heartbeats and unmounts; views answer.
  EXPECT_TRUE(client_->Heartbeat("node-a").ok());
  EXPECT_TRUE(client_->Stats().ok());
  EXPECT_TRUE(client_->ListSegments().ok());
  EXPECT_TRUE(client_->UnmountSegment("seg-a", "node-a", kOwnerToken).ok());
  // Nothing the drain refused reached the engine.
  EXPECT_EQ(master_->Stats().pending_puts, 0u);
}

TEST_F(RpcAvailabilityTest, AnUnreachableReportMakesPlacementSkipTheNode) {
  auto a = client_->MountSegment(Spec("seg-a", "node-a", "127.0.0.1:7001"));
  master::SegmentSpec big = Spec("seg-b", "node-b", "127.0.0.1:7002");
  big.capacity = 4 << 20;  // the emptiest: placement's first choice
  auto b = client_->MountSegment(big);
  ASSERT_TRUE(a.ok() && b.ok());
  uint32_t reported[] = {*b};
  ASSERT_TRUE(client_->ReportUnreachable(reported).ok());
  auto put = client_->PutStart("k", 100, {});
  ASSERT_TRUE(put.ok()) << put.status().ToString();
  EXPECT_EQ(put->replicas.at(0).cap.segment, *a);
  EXPECT_EQ(client_->ReportUnreachable({}).code(), ErrorCode::kInvalidArgument);
}

TEST_F(RpcAvailabilityTest, AUnixSocketPathTooLongIsRefusedNamingTheLimit) {
  const std::string path = "/tmp/" + std::string(MaxUnixSocketPath(), 'x') + ".sock";
  MasterServerOptions options = DefaultServerOptions();
  options.unix_socket = path;
  auto server = MasterServer::Start(options, *master_, *signer_);
  EXPECT_EQ(server.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(server.status().message().find(std::to_string(MaxUnixSocketPath())), std::string::npos)
      << server.status().ToString();

  MasterClientOptions client_options;
  client_options.address = "unix:" + path;
  auto client = MasterClient::Create(client_options);
  EXPECT_EQ(client.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(client.status().message().find(std::to_string(MaxUnixSocketPath())), std::string::npos)
      << client.status().ToString();
}

// The package of master.proto's services is part of each method's path, which
// clients and nodes built earlier send: it must stay crescent.rpc (the
// messages' own package, crescent.proto, is not on the wire).
TEST_F(RpcAvailabilityTest, TheMethodPathsOfEarlierBuildsStillAnswer) {
  auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(server_->port()),
                                     grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  std::string bytes;
  ASSERT_TRUE(proto::Empty().SerializeToString(&bytes));
  grpc::Slice slice(bytes);
  grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer reply;
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  grpc::Status status;
  stub.UnaryCall(&ctx, "/crescent.rpc.Master/Stats", grpc::StubOptions(), &request, &reply,
                 [&](grpc::Status s) {
                   std::lock_guard lock(mu);
                   status = std::move(s);
                   done = true;
                   cv.notify_all();
                 });
  std::unique_lock lock(mu);
  cv.wait(lock, [&] { return done; });
  ASSERT_TRUE(status.ok()) << status.error_code() << ": " << status.error_message();
  std::vector<grpc::Slice> slices;
  ASSERT_TRUE(reply.Dump(&slices).ok());
  std::string answer;
  for (const grpc::Slice& s : slices)
    answer.append(reinterpret_cast<const char*>(s.begin()), s.size());
  proto::StatsResponse stats;
  ASSERT_TRUE(stats.ParseFromString(answer));
  EXPECT_EQ(stats.status().code(), 0);
}

}  // namespace
}  // namespace crescent::rpc::testing
