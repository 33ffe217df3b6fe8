// The master-only data-plane ops on real servers over loopback: copy (into a
// segment of the same node, or of another node) and verify. A copy lands the
// exact bytes; capabilities of the wrong op, another segment or past their
// expiry are refused and move nothing; a verify tells matching bytes from
// damaged ones.
#include "transfer/copy_executor.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "common/value_hash.h"
#include "transfer/segment_memory.h"
#include "transfer/tcp_server.h"
#include "transfer/tcp_transport.h"

namespace crescent::transfer {
namespace {

constexpr uint64_t kSize = 4 << 20;

struct Node {
  std::unique_ptr<SegmentMemory> dram;
  std::unique_ptr<SegmentMemory> second;  // another segment of the same node
  std::unique_ptr<TcpDataServer> server;
  std::string endpoint;  // the DRAM segment's mount
  std::string second_endpoint;
};

class CopyExecutorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto signer = CapabilitySigner::Create("copy-executor-test-secret");
    ASSERT_TRUE(signer.ok());
    signer_.emplace(*signer);
    ASSERT_NO_FATAL_FAILURE(StartNode(a_, 1));
    ASSERT_NO_FATAL_FAILURE(StartNode(b_, 3));
    TcpTransportOptions o;
    o.lanes = 1;
    transport_ = MakeTcpTransport(o);
  }

  void StartNode(Node& n, uint32_t first_id) {
    auto d = SegmentMemory::Create("copy-test-a", kSize);
    auto s = SegmentMemory::Create("copy-test-b", kSize);
    ASSERT_TRUE(d.ok() && s.ok());
    n.dram = std::move(*d);
    n.second = std::move(*s);
    auto server = TcpDataServer::Start({}, SegmentSet({n.dram.get(), n.second.get()}), *signer_);
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    n.server = std::move(*server);
    const std::string base = "127.0.0.1:" + std::to_string(n.server->port());
    n.endpoint = base + ";epoch=" + std::to_string(first_id);
    n.second_endpoint = base + ";epoch=" + std::to_string(first_id + 1);
    n.dram->SetMount(first_id, n.endpoint);
    n.second->SetMount(first_id + 1, n.second_endpoint);
  }

  // Asks `from`'s node to copy [offset, +length) of its DRAM segment into
  // (segment, endpoint) at `to_offset`.
  Status Copy(Node& from, uint64_t offset, uint64_t length, uint32_t segment,
              const std::string& endpoint, uint64_t to_offset, AccessOp source_op = AccessOp::kCopy,
              int64_t ttl_ms = 10'000) {
    wire::CopyTarget target;
    target.endpoint = endpoint;
    target.cap = signer_->Sign(endpoint, segment, to_offset, length, AccessOp::kWrite,
                               UnixNowMs() + ttl_ms);
    std::vector<uint8_t> payload = wire::EncodeCopyTarget(target);
    TransferOp op;
    op.endpoint = from.endpoint;
    op.cap = signer_->Sign(from.endpoint, from.dram->id(), offset, length, source_op,
                           UnixNowMs() + ttl_ms);
    op.cap.op = AccessOp::kCopy;  // a capability signed for another op, presented for a copy
    op.buffer = reinterpret_cast<std::byte*>(payload.data());
    op.request_payload_bytes = payload.size();
    return transport_->Execute({&op, 1}, 5000)[0];
  }

  Status Verify(Node& n, uint64_t offset, uint64_t length, uint64_t checksum) {
    TransferOp op;
    op.endpoint = n.endpoint;
    op.cap = signer_->Sign(n.endpoint, n.dram->id(), offset, length, AccessOp::kVerify,
                           UnixNowMs() + 10'000);
    op.buffer = reinterpret_cast<std::byte*>(&checksum);
    op.request_payload_bytes = sizeof checksum;
    return transport_->Execute({&op, 1}, 5000)[0];
  }

  void Fill(SegmentMemory& s, uint64_t offset, uint64_t length, uint8_t seed) {
    for (uint64_t i = 0; i < length; ++i) s.data()[offset + i] = std::byte(seed + i * 31);
  }
  bool Same(const SegmentMemory& a, uint64_t ao, const SegmentMemory& b, uint64_t bo, uint64_t n) {
    return std::memcmp(a.data() + ao, b.data() + bo, n) == 0;
  }

  std::optional<CapabilitySigner> signer_;
  Node a_, b_;
  std::unique_ptr<Transport> transport_;
};

TEST_F(CopyExecutorTest, ACopyIntoASegmentOfTheSameNodeLandsTheBytes) {
  Fill(*a_.dram, 8192, 100'000, 7);
  ASSERT_TRUE(Copy(a_, 8192, 100'000, a_.second->id(), a_.second_endpoint, 65536).ok());
  EXPECT_TRUE(Same(*a_.dram, 8192, *a_.second, 65536, 100'000));
}

TEST_F(CopyExecutorTest, ACopyToAnotherNodeGoesOverTcp) {
  Fill(*a_.dram, 0, 1 << 20, 3);
  ASSERT_TRUE(Copy(a_, 0, 1 << 20, b_.dram->id(), b_.endpoint, 4096).ok());
  EXPECT_TRUE(Same(*a_.dram, 0, *b_.dram, 4096, 1 << 20));
}

TEST_F(CopyExecutorTest, WrongCapabilitiesAreRefusedAndMoveNothing) {
  Fill(*a_.dram, 0, 4096, 9);
  std::memset(a_.second->data(), 0, 4096);
  // A read capability is not a copy capability (its tag names the op).
  EXPECT_EQ(Copy(a_, 0, 4096, a_.second->id(), a_.second_endpoint, 0, AccessOp::kRead).code(),
            ErrorCode::kCapabilityInvalid);
  // An expired one.
  EXPECT_FALSE(Copy(a_, 0, 4096, a_.second->id(), a_.second_endpoint, 0, AccessOp::kCopy, -1).ok());
  // A target signed for another mount of the segment (an old epoch).
  EXPECT_FALSE(Copy(a_, 0, 4096, a_.second->id(), "127.0.0.1:1;epoch=99", 0).ok());
  EXPECT_FALSE(Copy(a_, 0, 4096, 77, a_.second_endpoint, 0).ok()) << "no such segment anywhere";
  const std::vector<std::byte> zeros(4096);
  EXPECT_EQ(std::memcmp(a_.second->data(), zeros.data(), zeros.size()), 0);
}

TEST_F(CopyExecutorTest, VerifyTellsMatchingBytesFromDamagedOnes) {
  Fill(*a_.dram, 1000, 50'000, 5);
  const uint64_t sum = HashValue(a_.dram->data() + 1000, 50'000);
  EXPECT_TRUE(Verify(a_, 1000, 50'000, sum).ok());
  a_.dram->data()[1000 + 777] ^= std::byte{1};
  EXPECT_EQ(Verify(a_, 1000, 50'000, sum).code(), ErrorCode::kChecksumMismatch);
}

}  // namespace
}  // namespace crescent::transfer
