// Bad requests against a real cluster: each must fail with a precise code and a
// message that says why, and leave the cluster serving normal traffic.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

#include "integration/cluster.h"
#include "integration/raw_socket.h"
#include "transfer/wire.h"

namespace crescent::itest {
namespace {

using testing::HasSubstr;

constexpr size_t kMiB = 1024 * 1024;

class ClusterErrorsTest : public WithCluster<testing::Test> {
 protected:
  static ClusterOptions Options() {
    ClusterOptions o;
    o.stores = 1;
    o.segment_size = "8MiB";
    return o;
  }
  void SetUp() override { StartAndConnect(Options(), /*use_shm=*/false); }

  // A normal round trip still works.
  void ExpectServing(const std::string& key) {
    std::vector<std::byte> value = RandomBytes(100 * 1024, 7);
    Status put = client_->Put(key, value);
    ASSERT_TRUE(put.ok()) << put.ToString();
    StatusOr<std::vector<std::byte>> got = client_->Get(key);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_TRUE(got.value() == value);
  }
};

// A node listening on every address (0.0.0.0) must be told which one clients
// can reach; it refuses to start without, instead of advertising 0.0.0.0.
TEST_F(ClusterErrorsTest, WildcardDataHostNeedsAnAdvertisedAddress) {
  TempDir dir;
  CommandResult r =
      RunCrescent({"store", "--master", cluster_->master_address(), "--secret-file",
                   cluster_->secret_file(), "--segment-size", "8MiB", "--host", "0.0.0.0"},
                  dir.path());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--advertise-host"));
  r = RunCrescent(
      {"store", "--master", cluster_->master_address(), "--secret-file", cluster_->secret_file(),
       "--segment-size", "8MiB", "--advertise-host", "0.0.0.0"},
      dir.path());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("not an address clients can connect to"));

  ASSERT_TRUE(cluster_->AddStore({"--host", "0.0.0.0", "--advertise-host", "127.0.0.1"}));
  EXPECT_EQ(cluster_->store(1).host, "127.0.0.1");
  ASSERT_TRUE(cluster_->WaitForSegments(*client_, 2, std::chrono::milliseconds(20000)));
  std::vector<std::byte> value = RandomBytes(64 * 1024, 8);
  PutOptions two;
  two.replica_count = 2;  // one copy on the wildcard node
  Status put = client_->Put("advertised/k", value, two);
  ASSERT_TRUE(put.ok()) << put.ToString();
  StatusOr<std::vector<std::byte>> got = client_->Get("advertised/k");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(got.value() == value);
}

TEST_F(ClusterErrorsTest, GetIntoTooSmallBufferNamesTheSizeNeeded) {
  constexpr size_t kSize = 3000;
  ASSERT_TRUE(client_->Put("small/k", RandomBytes(kSize, 1)).ok());
  std::vector<std::byte> buf(kSize - 1);
  ASSERT_TRUE(client_->RegisterBuffer(buf.data(), buf.size()).ok());
  StatusOr<size_t> got = client_->GetInto("small/k", buf.data(), buf.size());
  ASSERT_EQ(got.status().code(), ErrorCode::kBufferTooSmall) << got.status().ToString();
  EXPECT_THAT(got.status().message(), HasSubstr(std::to_string(kSize)));
  ExpectServing("small/after");
  EXPECT_TRUE(client_->UnregisterBuffer(buf.data()).ok());  // before buf is freed
}

TEST_F(ClusterErrorsTest, ObjectLargerThanAnySegmentIsRefusedWithoutEvicting) {
  ASSERT_TRUE(client_->Put("big/resident", RandomBytes(1000, 2)).ok());
  std::vector<std::byte> huge(9 * kMiB);  // the only segment holds 8 MiB
  Status put = client_->Put("big/huge", huge);
  EXPECT_EQ(put.code(), ErrorCode::kInvalidSize) << put.ToString();
  EXPECT_THAT(put.message(), HasSubstr(std::to_string(huge.size())));
  EXPECT_THAT(put.message(), HasSubstr("segment"));
  // Nothing was evicted trying to make room, and nothing is left pending.
  StatusOr<bool> resident = client_->Exists("big/resident");
  ASSERT_TRUE(resident.ok());
  EXPECT_TRUE(resident.value());
  StatusOr<ClusterStat> st = client_->Stat();
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st.value().pending_puts, 0u);
  StatusOr<bool> huge_exists = client_->Exists("big/huge");
  ASSERT_TRUE(huge_exists.ok());
  EXPECT_FALSE(huge_exists.value());
  ExpectServing("big/after");
}

TEST_F(ClusterErrorsTest, EmptyValueIsInvalidSize) {
  Status put = client_->Put("empty/value", {});
  EXPECT_EQ(put.code(), ErrorCode::kInvalidSize) << put.ToString();
  ExpectServing("empty/after");
}

TEST_F(ClusterErrorsTest, InvalidKeysAreRefused) {
  const std::string too_long(1025, 'k');
  const std::string longest(1024, 'k');
  std::vector<std::byte> value = RandomBytes(10, 3);
  for (const std::string& key : {std::string(), too_long}) {
    SCOPED_TRACE("key of " + std::to_string(key.size()) + " bytes");
    Status put = client_->Put(key, value);
    EXPECT_EQ(put.code(), ErrorCode::kInvalidKey) << put.ToString();
    EXPECT_FALSE(put.message().empty());
    EXPECT_EQ(client_->Get(key).status().code(), ErrorCode::kInvalidKey);
    EXPECT_EQ(client_->Exists(key).status().code(), ErrorCode::kInvalidKey);
    EXPECT_EQ(client_->Remove(key).code(), ErrorCode::kInvalidKey);
  }
  EXPECT_THAT(client_->Put(too_long, value).message(), HasSubstr("1024"));
  // Exactly at the limit is fine.
  ASSERT_TRUE(client_->Put(longest, value).ok());
  StatusOr<std::vector<std::byte>> got = client_->Get(longest);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(got.value() == value);
  ExpectServing("key/after");
}

TEST_F(ClusterErrorsTest, GarbageOnTheDataPortIsRejectedAndTheNodeKeepsServing) {
  const StoreProcess& node = cluster_->store(0);
  ASSERT_TRUE(client_->Put("garbage/before", RandomBytes(5000, 4)).ok());

  // Random bytes: the first 88 are not a request header; the node says why,
  // then hangs up.
  {
    RawSocket s;
    ASSERT_TRUE(s.Connect(node.host, node.data_port)) << std::strerror(errno);
    s.Send(RandomString(4096, 5));
    std::string reply;
    EXPECT_TRUE(s.ReadUntilClosed(milliseconds(10000), &reply));
    ASSERT_GE(reply.size(), transfer::wire::kResponseHeaderSize);
    auto header = transfer::wire::DecodeResponse(reinterpret_cast<const uint8_t*>(reply.data()));
    ASSERT_TRUE(header.ok()) << header.status().ToString();
    EXPECT_EQ(header.value().code, ErrorCode::kParseError);
  }

  // A well-formed header with a forged capability: refused (and its payload
  // drained), the connection stays usable, until garbage follows.
  {
    transfer::wire::RequestHeader h;
    h.request_id = 42;
    h.cap.segment = 1;
    h.cap.offset = 0;
    h.cap.length = 1000;
    h.cap.op = transfer::AccessOp::kWrite;
    h.cap.expiry_unix_ms = UnixNowMs() + 60000;
    h.cap.tag.fill(0xAB);
    h.payload_length = h.cap.length;
    transfer::wire::RequestBytes bytes;
    transfer::wire::EncodeRequest(h, bytes);
    RawSocket s;
    ASSERT_TRUE(s.Connect(node.host, node.data_port));
    std::string request(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    s.Send(request + std::string(h.payload_length, 'x') + RandomString(500, 6));
    std::string reply;
    EXPECT_TRUE(s.ReadUntilClosed(milliseconds(10000), &reply));
    ASSERT_GE(reply.size(), transfer::wire::kResponseHeaderSize);
    auto first = transfer::wire::DecodeResponse(reinterpret_cast<const uint8_t*>(reply.data()));
    ASSERT_TRUE(first.ok());
    EXPECT_EQ(first.value().request_id, 42u);
    EXPECT_NE(first.value().code, ErrorCode::kOk);
    // The forged write changed nothing.
    StatusOr<std::vector<std::byte>> before = client_->Get("garbage/before");
    ASSERT_TRUE(before.ok());
    EXPECT_TRUE(before.value() == RandomBytes(5000, 4));
  }

  // A client that connects and hangs up mid-header.
  {
    RawSocket s;
    ASSERT_TRUE(s.Connect(node.host, node.data_port));
    s.Send("CRQ1");
  }
  ExpectServing("garbage/after");
}

TEST_F(ClusterErrorsTest, GarbageOnTheMasterPortIsRejectedAndTheMasterKeepsServing) {
  for (const std::string& junk :
       {RandomString(4096, 8), std::string("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
        std::string("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") + RandomString(1000, 9)}) {
    RawSocket s;
    ASSERT_TRUE(s.Connect("127.0.0.1", cluster_->master_port())) << std::strerror(errno);
    s.Send(junk);
    std::string reply;
    EXPECT_TRUE(s.ReadUntilClosed(milliseconds(15000), &reply)) << "the master kept a junk "
                                                                   "connection open";
  }
  EXPECT_TRUE(cluster_->master().Running());
  ExpectServing("master-garbage/after");
  StatusOr<ClusterStat> st = client_->Stat();
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st.value().segments.size(), 1u);
}

}  // namespace
}  // namespace crescent::itest
