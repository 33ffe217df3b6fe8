// ReplicaIo::WriteAll's checksums: one per object, taken by the transport as
// the bytes leave, and an object whose replicas were sent different bytes
// (the caller's buffer changed during the put) fails instead of ending with a
// checksum that some replica does not match. The transport here hashes each
// op's buffer as the real ones do (HashValue of the bytes written) and lets
// the test change the buffer between two ops; the real transports' hashing is
// tested in tcp_transport_test and shm_transport_test.
#include "client/replica_io.h"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>

#include "common/value_hash.h"

namespace crescent::client {
namespace {

class HashingTransport : public transfer::Transport {
 public:
  bool CanReach(const std::string&) override { return true; }
  const char* Name() const override { return "hashing"; }
  std::vector<Status> Execute(std::span<const transfer::TransferOp> ops, int64_t) override {
    std::vector<Status> out;
    for (const transfer::TransferOp& op : ops) {
      ++executed;
      if (op.checksum_out != nullptr) *op.checksum_out = HashValue(op.buffer, op.cap.length);
      out.push_back(fail_segment == op.cap.segment
                        ? Status(ErrorCode::kCapabilityInvalid, "refused")
                        : Status::Ok());
      if (after_op) after_op(executed);
    }
    return out;
  }
  int executed = 0;
  uint32_t fail_segment = 0;  // 0: none
  std::function<void(int)> after_op;
};

rpc::RemoteReplica Replica(uint32_t segment, uint64_t length) {
  rpc::RemoteReplica r;
  r.endpoint = "127.0.0.1:1";
  r.cap.segment = segment;
  r.cap.length = length;
  r.cap.op = transfer::AccessOp::kWrite;
  return r;
}

TEST(ReplicaIoWriteAll, ChecksumsComeFromTheTransportsAndReplicasMustAgree) {
  HashingTransport tcp;
  ReplicaIo io(tcp, nullptr, 1000);
  std::vector<std::byte> a(4096, std::byte{1}), b(8192, std::byte{2}), c(100, std::byte{3});
  const std::vector<rpc::RemoteReplica> ra = {Replica(1, a.size()), Replica(2, a.size())};
  const std::vector<rpc::RemoteReplica> rb = {Replica(3, b.size()), Replica(4, b.size())};
  const std::vector<rpc::RemoteReplica> rc = {Replica(5, c.size())};
  std::vector<const std::vector<rpc::RemoteReplica>*> replicas = {&ra, &rb, &rc};
  std::vector<const std::byte*> buffers = {a.data(), b.data(), c.data()};

  std::vector<uint64_t> sums;
  std::vector<Status> st = io.WriteAll(replicas, buffers, nullptr, &sums);
  ASSERT_EQ(st.size(), 3u);
  ASSERT_EQ(sums.size(), 3u);
  for (const Status& s : st) EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(sums[0], HashValue(a.data(), a.size()));
  EXPECT_EQ(sums[1], HashValue(b.data(), b.size()));
  EXPECT_EQ(sums[2], HashValue(c.data(), c.size()));

  // b's buffer changes after its first replica was written: its second
  // replica holds other bytes, so b fails; a and c are unaffected.
  const int before = tcp.executed;
  tcp.after_op = [&](int n) {
    if (n == before + 3) b[10] = std::byte{9};
  };
  st = io.WriteAll(replicas, buffers, nullptr, &sums);
  EXPECT_TRUE(st[0].ok());
  EXPECT_EQ(st[1].code(), ErrorCode::kInvalidArgument) << st[1].ToString();
  EXPECT_NE(st[1].message().find("changed"), std::string::npos) << st[1].ToString();
  EXPECT_EQ(sums[1], 0u);
  EXPECT_TRUE(st[2].ok());
  EXPECT_EQ(sums[2], HashValue(c.data(), c.size()));

  // A failed replica fails its object with the transport's error, and no checksum.
  tcp.after_op = nullptr;
  tcp.fail_segment = 2;
  st = io.WriteAll(replicas, buffers, nullptr, &sums);
  EXPECT_EQ(st[0].code(), ErrorCode::kCapabilityInvalid);
  EXPECT_EQ(sums[0], 0u);
  EXPECT_TRUE(st[1].ok());
  EXPECT_EQ(sums[1], HashValue(b.data(), b.size()));

  // Without `checksums` nothing is hashed.
  tcp.fail_segment = 0;
  tcp.after_op = [&](int) {};
  st = io.WriteAll(replicas, buffers);
  for (const Status& s : st) EXPECT_TRUE(s.ok());
}

}  // namespace
}  // namespace crescent::client
