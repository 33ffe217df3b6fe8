// Heartbeats on a server of their own (master_server.h, the Liveness service
// of master.proto; liveness_link.h on the node's side): advertised through
// ControlEndpoints, bound to one master process, and replaced by the main
// server's Heartbeat whenever it is off or gone.
#include <grpcpp/grpcpp.h>

#include "rpc/convert.h"
#include "rpc/master.grpc.pb.h"
#include "rpc/rpc_test_util.h"

namespace crescent::rpc::testing {
namespace {

std::string Local(int port) { return "127.0.0.1:" + std::to_string(port); }

class RpcLivenessTest : public RpcTest {
 protected:
  proto::ControlEndpointsResponse Endpoints() {
    auto stub = Master::NewStub(
        grpc::CreateChannel(Local(server_->port()), grpc::InsecureChannelCredentials()));
    grpc::ClientContext ctx;
    proto::ControlEndpointsResponse where;
    EXPECT_TRUE(stub->ControlEndpoints(&ctx, proto::Empty(), &where).ok());
    return where;
  }
  // One heartbeat straight to the Liveness service, naming `instance`.
  Status Beat(const std::string& node, uint64_t instance) {
    auto stub = Liveness::NewStub(
        grpc::CreateChannel(Local(server_->liveness_port()), grpc::InsecureChannelCredentials()));
    proto::HeartbeatRequest req;
    req.set_node(node);
    req.set_master_instance(instance);
    proto::HeartbeatResponse resp;
    grpc::ClientContext ctx;
    if (grpc::Status s = stub->Heartbeat(&ctx, req, &resp); !s.ok()) {
      return Status(ErrorCode::kInternal, s.error_message());
    }
    EXPECT_NE(resp.clock().unix_ms(), 0) << "the liveness reply carries the master's clock";
    return FromProto(resp.status());
  }
};

TEST_F(RpcLivenessTest, HeartbeatsHaveAServerOfTheirOwnBoundToThisMaster) {
  Start();
  ASSERT_NE(server_->liveness_port(), 0);
  EXPECT_NE(server_->liveness_port(), server_->port());
  const proto::ControlEndpointsResponse where = Endpoints();
  EXPECT_EQ(where.liveness_port(), static_cast<uint32_t>(server_->liveness_port()));
  ASSERT_NE(where.instance(), 0u);

  Mount();
  EXPECT_TRUE(Beat("node-a", where.instance()).ok());
  EXPECT_EQ(Beat("nobody", where.instance()).code(), ErrorCode::kNodeUnknown);
  // A heartbeat meant for another master process is not counted here.
  Status other = Beat("node-a", where.instance() + 1);
  EXPECT_EQ(other.code(), ErrorCode::kUnavailable) << other.ToString();
  EXPECT_TRUE(client_->Heartbeat("node-a").ok());
  EXPECT_EQ(client_->Heartbeat("nobody").code(), ErrorCode::kNodeUnknown);
}

TEST_F(RpcLivenessTest, WithoutItHeartbeatsGoToTheMainServer) {
  MasterServerOptions options = DefaultServerOptions();
  options.liveness_port = -1;
  Start(options);
  EXPECT_EQ(server_->liveness_port(), 0);
  EXPECT_EQ(Endpoints().liveness_port(), 0u);
  Mount();
  EXPECT_TRUE(client_->Heartbeat("node-a").ok());
  EXPECT_EQ(client_->Heartbeat("nobody").code(), ErrorCode::kNodeUnknown);
}

// A node that learnt the liveness port of a master whose server went away
// (here: restarted on the same gRPC port without one) heartbeats through the
// main server instead, in the same call.
TEST_F(RpcLivenessTest, ANodeFallsBackWhenTheLivenessServerIsGone) {
  Start();
  const int port = server_->port();
  MasterClientOptions node_options;
  node_options.address = Local(port);
  auto node = MasterClient::Create(node_options);
  ASSERT_TRUE(node.ok()) << node.status().ToString();
  ASSERT_TRUE((*node)->MountSegment(Spec("seg-a")).ok());  // learns the liveness port
  ASSERT_TRUE((*node)->Heartbeat("node-a").ok());

  MasterServerOptions options = DefaultServerOptions();
  options.listen_address = Local(port);
  options.liveness_port = -1;
  Start(options);  // the engine, and so the mount, survive
  Status beat = (*node)->Heartbeat("node-a");
  EXPECT_TRUE(beat.ok()) << beat.ToString();
}

}  // namespace
}  // namespace crescent::rpc::testing
