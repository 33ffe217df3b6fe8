// Bounded input on every port, with real processes: headers that claim huge
// bodies cost the master nothing until the bodies come, and it keeps serving;
// a store node's data port holds at most --max-connections and closes
// connections idle past --idle-timeout-ms, while clients carry on.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <regex>
#include <thread>

#include "integration/cluster.h"
#include "integration/raw_socket.h"
#include "transfer/wire.h"

namespace crescent::itest {
namespace {

using testing::HasSubstr;
namespace wire = transfer::wire;

// VmRSS of process `pid` in bytes, from /proc/PID/status; 0 if unreadable.
uint64_t ResidentBytes(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6)) * 1024;  // kB
  }
  return 0;
}

// A lean control request header claiming a `body`-byte body.
std::string ControlHeaderClaiming(uint32_t body) {
  std::string out(wire::kControlHeaderSize, '\0');
  wire::EncodeControl({/*method=*/5, /*request_id=*/1, body},
                      reinterpret_cast<uint8_t*>(out.data()));
  return out;
}

class PortLimitsTest : public WithCluster<testing::Test> {
 protected:
  void ExpectPutAndGet(Client& client, const std::string& key) {
    const std::vector<std::byte> value = RandomBytes(256 * 1024, 11);
    Status put = client.Put(key, value);
    ASSERT_TRUE(put.ok()) << put.ToString();
    StatusOr<std::vector<std::byte>> got = client.Get(key);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_TRUE(got.value() == value);
  }
};

// Hundreds of connections, each a header claiming a 64 MiB body (the master's
// message limit) and nothing after it: the master's resident memory stays
// within one such body in all, and real clients' puts and gets go on.
TEST_F(PortLimitsTest, HeadersClaimingHugeBodiesCostTheMasterNothing) {
  ClusterOptions options;
  options.stores = 1;
  options.segment_size = "16MiB";
  ASSERT_NO_FATAL_FAILURE(StartAndConnect(options, /*use_shm=*/false));
  auto lean = cluster_->master().WaitForMatch(
      std::regex(R"(lean control protocol on 127\.0\.0\.1:(\d+))"), milliseconds(5000));
  ASSERT_TRUE(lean.has_value()) << cluster_->master().Output();
  const uint16_t control_port = static_cast<uint16_t>(std::stoi((*lean)[1]));
  ASSERT_NO_FATAL_FAILURE(ExpectPutAndGet(*client_, "before"));
  const pid_t master = cluster_->master().pid();
  const uint64_t baseline = ResidentBytes(master);
  ASSERT_GT(baseline, 0u);

  constexpr int kConnections = 300;
  constexpr int kBatch = 25;
  constexpr uint64_t kBound = 64ull << 20;  // one claimed body, for all of them together
  const std::string claim = ControlHeaderClaiming(64u << 20);
  std::vector<std::unique_ptr<RawSocket>> held;
  while (held.size() < kConnections) {
    for (int i = 0; i < kBatch; ++i) {
      auto s = std::make_unique<RawSocket>();
      ASSERT_TRUE(s->Connect("127.0.0.1", control_port)) << std::strerror(errno);
      ASSERT_TRUE(s->Send(claim));
      held.push_back(std::move(s));
    }
    // A call through the master's lean port after them: by its answer the
    // master has read those headers.
    StatusOr<bool> exists = client_->Exists("before");
    ASSERT_TRUE(exists.ok()) << exists.status().ToString();
    const uint64_t rss = ResidentBytes(master);
    ASSERT_LT(rss, baseline + kBound)
        << held.size() << " connections claiming 64 MiB each grew the master from " << baseline
        << " to " << rss << " resident bytes";
  }
  ASSERT_TRUE(cluster_->master().Running());
  std::printf("master VmRSS: %.1f MiB before, %.1f MiB with %d connections claiming 64 MiB each\n",
              baseline / 1048576.0, ResidentBytes(master) / 1048576.0, kConnections);

  // Meanwhile a real client, and the `crescent` CLI as separate processes.
  ASSERT_NO_FATAL_FAILURE(ExpectPutAndGet(*client_, "during"));
  TempDir& dir = cluster_->dir();
  const std::string value = RandomString(300 * 1024, 12);
  ASSERT_TRUE(WriteFile(dir.File("value.bin"), value));
  CommandResult put =
      RunCrescent({"put", "--master", cluster_->master_address(), "cli-key", dir.File("value.bin")},
                  dir.path());
  ASSERT_EQ(put.exit_code, 0) << put.err;
  CommandResult get = RunCrescent(
      {"get", "--master", cluster_->master_address(), "cli-key", dir.File("back.bin")}, dir.path());
  ASSERT_EQ(get.exit_code, 0) << get.err;
  std::ifstream back(dir.File("back.bin"), std::ios::binary);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(back), {}), value);
  EXPECT_LT(ResidentBytes(master), baseline + kBound);
}

// The data port holds --max-connections: the next connection is told why and
// closed, a TCP client's transfer then fails with that reason, and once a
// slot is free transfers go on.
TEST_F(PortLimitsTest, TheDataPortHoldsAtMostMaxConnections) {
  ClusterOptions options;
  options.stores = 1;
  options.segment_size = "16MiB";
  options.store_flags = {"--max-connections", "2"};
  ASSERT_NO_FATAL_FAILURE(StartCluster(options));
  const StoreProcess& node = cluster_->store(0);
  std::vector<std::unique_ptr<RawSocket>> held;
  for (int i = 0; i < 2; ++i) {
    held.push_back(std::make_unique<RawSocket>());
    ASSERT_TRUE(held.back()->Connect(node.host, node.data_port));
  }
  RawSocket extra;
  ASSERT_TRUE(extra.Connect(node.host, node.data_port));
  std::string reply;
  EXPECT_TRUE(extra.ReadUntilClosed(milliseconds(10000), &reply));
  ASSERT_GE(reply.size(), wire::kResponseHeaderSize);
  auto h = wire::DecodeResponse(reinterpret_cast<const uint8_t*>(reply.data()));
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_EQ(h->code, ErrorCode::kUnavailable);
  EXPECT_THAT(reply.substr(wire::kResponseHeaderSize),
              HasSubstr("the store node already holds 2 connections on this port "
                        "(--max-connections)"));

  // A TCP client cannot reach the node meanwhile (it reports the node to the
  // master, which places nothing there until the node's next heartbeat).
  std::unique_ptr<Client> tcp = cluster_->Connect(/*use_shm=*/false);
  ASSERT_NE(tcp, nullptr);
  Status refused = tcp->Put("full", RandomBytes(1000, 13));
  EXPECT_EQ(refused.code(), ErrorCode::kUnavailable) << refused.ToString();

  held.pop_back();  // a slot frees once the node has seen the close
  Status put;
  for (int i = 0; i < 200 && !(put = tcp->Put("freed", RandomBytes(1000, 14))).ok(); ++i) {
    std::this_thread::sleep_for(milliseconds(50));
  }
  EXPECT_TRUE(put.ok()) << put.ToString();
}

// The data port closes a connection on which nothing moved for
// --idle-timeout-ms, between requests or inside one (a write's payload that
// stops coming); a client whose pooled connections were closed so carries on.
TEST_F(PortLimitsTest, TheDataPortClosesIdleConnections) {
  ClusterOptions options;
  options.stores = 1;
  options.segment_size = "16MiB";
  options.store_flags = {"--idle-timeout-ms", "300"};
  ASSERT_NO_FATAL_FAILURE(StartAndConnect(options, /*use_shm=*/false));
  ASSERT_NO_FATAL_FAILURE(ExpectPutAndGet(*client_, "first"));
  const StoreProcess& node = cluster_->store(0);

  RawSocket silent;
  ASSERT_TRUE(silent.Connect(node.host, node.data_port));
  RawSocket stalled;  // a write refused (a forged capability) whose payload never comes
  ASSERT_TRUE(stalled.Connect(node.host, node.data_port));
  wire::RequestHeader req;
  req.request_id = 0;
  req.cap.segment = 1;
  req.cap.length = 1 << 20;
  req.cap.op = transfer::AccessOp::kWrite;
  req.cap.expiry_unix_ms = UnixNowMs() + 60000;
  req.payload_length = req.cap.length;
  wire::RequestBytes bytes;
  wire::EncodeRequest(req, bytes);
  ASSERT_TRUE(stalled.Send(std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()) +
                           std::string(1000, 'x')));
  std::string ignored;
  EXPECT_TRUE(silent.ReadUntilClosed(milliseconds(20000), &ignored)) << "a silent connection "
                                                                        "stayed open";
  EXPECT_TRUE(stalled.ReadUntilClosed(milliseconds(20000), &ignored))
      << "a connection stalled inside a payload stayed open";

  // The client's pooled connections went idle as long; the next transfers work.
  ASSERT_NO_FATAL_FAILURE(ExpectPutAndGet(*client_, "after"));
}

// The master's gRPC port closes a connection with no call on it for
// --idle-timeout-ms too (gRPC's max_connection_idle), and clients carry on.
TEST_F(PortLimitsTest, TheMastersGrpcPortClosesIdleConnections) {
  ClusterOptions options;
  options.stores = 1;
  options.segment_size = "16MiB";
  options.master_flags = {"--idle-timeout-ms", "300"};
  ASSERT_NO_FATAL_FAILURE(StartAndConnect(options, /*use_shm=*/false));
  RawSocket idle;  // an HTTP/2 connection (preface, empty SETTINGS) that makes no call
  ASSERT_TRUE(idle.Connect("127.0.0.1", cluster_->master_port()));
  ASSERT_TRUE(idle.Send(std::string("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") +
                        std::string("\0\0\0\x04\0\0\0\0\0", 9)));
  std::string received;
  EXPECT_TRUE(idle.ReadUntilClosed(milliseconds(20000), &received))
      << "an idle gRPC connection stayed open";
  ASSERT_NO_FATAL_FAILURE(ExpectPutAndGet(*client_, "after"));
}

}  // namespace
}  // namespace crescent::itest
