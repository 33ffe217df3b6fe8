// End-to-end tests of the TCP data plane: TcpDataServer on a real segment and
// the TCP transport over loopback.
#include "transfer/tcp_transport.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <array>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/read.hpp>
#include <asio/write.hpp>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstring>
#include <numeric>
#include <thread>
#include <vector>

#include "common/value_hash.h"
#include "transfer/segment_memory.h"
#include "transfer/tcp_server.h"
#include "transfer/wire.h"

namespace crescent::transfer {
namespace {

using asio::ip::tcp;
constexpr uint64_t kSegmentSize = 32ull << 20;
constexpr uint32_t kSegmentId = 7;

std::vector<std::byte> Pattern(size_t n, uint32_t seed) {
  std::vector<std::byte> out(n);
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    out[i] = static_cast<std::byte>(x >> 24);
  }
  return out;
}

class TcpTransportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto signer = CapabilitySigner::Create("tcp-transport-test-secret");
    ASSERT_TRUE(signer.ok());
    signer_.emplace(*signer);
    auto seg = SegmentMemory::Create("tcp-test", kSegmentSize);
    ASSERT_TRUE(seg.ok()) << seg.status().ToString();
    segment_ = std::move(*seg);
    auto server = TcpDataServer::Start({}, *segment_, *signer_);
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(*server);
    endpoint_ = "127.0.0.1:" + std::to_string(server_->port());
    segment_->SetBinding(endpoint_);
    segment_->SetId(kSegmentId);
    transport_ = MakeTcpTransport({.lanes = 4});
  }

  Capability Cap(uint64_t offset, uint64_t length, AccessOp op, int64_t ttl_ms = 10000,
                 uint32_t segment = kSegmentId) {
    return signer_->Sign(endpoint_, segment, offset, length, op, UnixNowMs() + ttl_ms);
  }
  TransferOp Op(Capability cap, std::byte* buffer) { return TransferOp{endpoint_, cap, buffer}; }
  Status One(const TransferOp& op, int64_t timeout_ms = 5000) {
    return transport_->Execute(std::span(&op, 1), timeout_ms)[0];
  }
  Status Put(uint64_t offset, std::vector<std::byte>& data) {
    return One(Op(Cap(offset, data.size(), AccessOp::kWrite), data.data()));
  }
  Status Get(uint64_t offset, std::vector<std::byte>& out) {
    return One(Op(Cap(offset, out.size(), AccessOp::kRead), out.data()));
  }
  // A connection of the test's own, below the transport, for raw frames.
  tcp::socket RawConnect(asio::io_context& io) {
    tcp::socket raw(io);
    asio::error_code ec;
    raw.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), server_->port()), ec);
    EXPECT_FALSE(ec) << ec.message();
    return raw;
  }
  // A valid write and read-back still work: the server survived the last refusal.
  void ExpectStillServes() {
    std::vector<std::byte> data = Pattern(1000, 99), back(1000);
    ASSERT_TRUE(Put(1 << 20, data).ok());
    ASSERT_TRUE(Get(1 << 20, back).ok());
    EXPECT_EQ(data, back);
  }

  std::optional<CapabilitySigner> signer_;
  std::unique_ptr<SegmentMemory> segment_;
  std::unique_ptr<TcpDataServer> server_;
  std::string endpoint_;
  std::unique_ptr<Transport> transport_;
};

TEST_F(TcpTransportTest, NameAndCanReach) {
  EXPECT_STREQ(transport_->Name(), "tcp");
  EXPECT_TRUE(transport_->CanReach(endpoint_));
  EXPECT_TRUE(transport_->CanReach(endpoint_ + ";shm=abc"));
  EXPECT_FALSE(transport_->CanReach("no-port"));
}

TEST_F(TcpTransportTest, WritesThenReadsBackByteIdentically) {
  uint64_t offset = 0;
  for (size_t size : {size_t{1}, size_t{64} << 10, size_t{4} << 20}) {
    std::vector<std::byte> data = Pattern(size, static_cast<uint32_t>(size));
    ASSERT_TRUE(Put(offset, data).ok()) << size;
    std::vector<std::byte> back(size);
    Status s = Get(offset, back);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(data, back) << size;
    EXPECT_EQ(std::memcmp(segment_->data() + offset, data.data(), size), 0);
    offset += size + 4096;
  }
}

// A lane polled alone reads a payload in low-water-mark steps of 128 KiB
// (wire::kLoneLaneMark). Sizes on each side of the step's edges arrive whole,
// one op per call, and the pooled connection then still answers a 1-byte read
// (its mark went back to 1).
TEST_F(TcpTransportTest, LoneLaneReadsEverySizeAroundItsMarkSteps) {
  constexpr size_t kStep = wire::kLoneLaneMark, kFrom = 64 << 10;
  uint64_t offset = 0;
  for (size_t size : {kFrom, kFrom + 1, kStep - 1, kStep, kStep + 1, kStep + kFrom + 1,
                      2 * kStep + 3, size_t{1} << 20, (size_t{3} << 20) + 13}) {
    SCOPED_TRACE(size);
    std::vector<std::byte> data = Pattern(size, static_cast<uint32_t>(size) * 3 + 1);
    ASSERT_TRUE(Put(offset, data).ok());
    std::vector<std::byte> back(size);
    Status s = Get(offset, back);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(data, back);
    std::vector<std::byte> one(1);
    s = Get(offset + size - 1, one);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(one[0], data.back());
    offset += size + 4096;
  }
}

TEST_F(TcpTransportTest, BatchOf64OpsOver4Lanes) {
  constexpr size_t kOps = 64, kSize = 48 << 10;
  std::vector<std::vector<std::byte>> data, back;
  std::vector<TransferOp> writes, reads;
  for (size_t i = 0; i < kOps; ++i) {
    data.push_back(Pattern(kSize + i, static_cast<uint32_t>(i)));
    back.emplace_back(kSize + i);
  }
  for (size_t i = 0; i < kOps; ++i) {
    uint64_t offset = i * (kSize + 4096);
    writes.push_back(Op(Cap(offset, data[i].size(), AccessOp::kWrite), data[i].data()));
    reads.push_back(Op(Cap(offset, back[i].size(), AccessOp::kRead), back[i].data()));
  }
  for (const Status& s : transport_->Execute(writes, 5000)) ASSERT_TRUE(s.ok()) << s.ToString();
  for (const Status& s : transport_->Execute(reads, 5000)) ASSERT_TRUE(s.ok()) << s.ToString();
  for (size_t i = 0; i < kOps; ++i) EXPECT_EQ(data[i], back[i]) << i;
  // The lanes went back to the pool and are reused.
  for (const Status& s : transport_->Execute(reads, 5000)) ASSERT_TRUE(s.ok()) << s.ToString();
}

// A verified read hashes the payload as it arrives: over pipelined lanes,
// several payloads per lane, each its own checksum (the lane's hash restarts
// per payload), equal to the one-shot hash of the bytes delivered.
TEST_F(TcpTransportTest, ReadsHashTheBytesTheyDeliver) {
  constexpr size_t kOps = 12;
  std::vector<std::vector<std::byte>> data, back;
  std::vector<TransferOp> writes, reads;
  std::vector<uint64_t> sums(kOps, 0);
  uint64_t offset = 0;
  for (size_t i = 0; i < kOps; ++i) {
    const size_t size = i % 3 == 0 ? (size_t{3} << 20) + i : (size_t{40} << 10) * (i + 1) + 7;
    data.push_back(Pattern(size, static_cast<uint32_t>(i) + 50));
    back.emplace_back(size);
    writes.push_back(Op(Cap(offset, size, AccessOp::kWrite), data[i].data()));
    reads.push_back(Op(Cap(offset, size, AccessOp::kRead), back[i].data()));
    reads.back().checksum_out = &sums[i];
    offset += size + 4096;
  }
  ASSERT_LT(offset, kSegmentSize);
  for (const Status& s : transport_->Execute(writes, 10000)) ASSERT_TRUE(s.ok()) << s.ToString();
  for (const Status& s : transport_->Execute(reads, 10000)) ASSERT_TRUE(s.ok()) << s.ToString();
  for (size_t i = 0; i < kOps; ++i) {
    EXPECT_EQ(data[i], back[i]) << i;
    EXPECT_EQ(sums[i], HashValue(data[i].data(), data[i].size())) << i;
  }
  // One op alone (the lone lane's smaller steps) too.
  uint64_t one = 0;
  std::vector<std::byte> again(data[0].size());
  TransferOp read = Op(Cap(0, again.size(), AccessOp::kRead), again.data());
  read.checksum_out = &one;
  ASSERT_TRUE(One(read).ok());
  EXPECT_EQ(one, HashValue(data[0].data(), data[0].size()));
}

// A write with checksum_out hashes its payload as each send leaves: over
// pipelined lanes, each payload its own checksum, equal to the one-shot hash of
// the bytes sent; writes without it and reads in the same batch are untouched.
TEST_F(TcpTransportTest, WritesHashTheBytesTheySend) {
  constexpr size_t kOps = 10;
  std::vector<std::vector<std::byte>> data;
  std::vector<TransferOp> writes;
  std::vector<uint64_t> sums(kOps, 0);
  uint64_t offset = 0;
  for (size_t i = 0; i < kOps; ++i) {
    const size_t size = i % 4 == 0 ? (size_t{5} << 20) + i : (size_t{24} << 10) * (i + 1) + 3;
    data.push_back(Pattern(size, static_cast<uint32_t>(i) + 90));
    writes.push_back(Op(Cap(offset, size, AccessOp::kWrite), data[i].data()));
    if (i != 3) writes.back().checksum_out = &sums[i];
    offset += size + 4096;
  }
  ASSERT_LT(offset, kSegmentSize);
  for (const Status& s : transport_->Execute(writes, 10000)) ASSERT_TRUE(s.ok()) << s.ToString();
  for (size_t i = 0; i < kOps; ++i) {
    if (i == 3) {
      EXPECT_EQ(sums[i], 0u);
      continue;
    }
    EXPECT_EQ(sums[i], HashValue(data[i].data(), data[i].size())) << i;
  }
  // What was hashed is what landed.
  std::vector<std::byte> back(data[4].size());
  uint64_t read_sum = 0;
  TransferOp read = Op(Cap(writes[4].cap.offset, back.size(), AccessOp::kRead), back.data());
  read.checksum_out = &read_sum;
  ASSERT_TRUE(One(read).ok());
  EXPECT_EQ(read_sum, sums[4]);
}

// An op in slices (64 of them: a layer-first page of 32 layers, K and V)
// writes them in order and reads back into other slices, with no buffer of
// its own: the bytes and both checksums are those of the one buffer they make.
TEST_F(TcpTransportTest, SlicedOpsMoveAndHashTheirSlicesInOrder) {
  constexpr size_t kSlices = 64;
  std::vector<std::byte> whole = Pattern(kSlices * 12345, 17);
  std::vector<std::byte> spread(whole.size() + kSlices * 100), back(whole.size() + 3 * 100);
  std::vector<BufferSlice> out, in;
  for (size_t j = 0; j < kSlices; ++j) {  // gaps between the slices
    std::memcpy(spread.data() + j * (12345 + 100), whole.data() + j * 12345, 12345);
    out.push_back({spread.data() + j * (12345 + 100), 12345});
  }
  const size_t third = whole.size() / 3;
  for (size_t j = 0; j < 3; ++j) {
    in.push_back({back.data() + j * (third + 100), j < 2 ? third : whole.size() - 2 * third});
  }
  uint64_t sent = 0, got = 0;
  TransferOp write = Op(Cap(4096, whole.size(), AccessOp::kWrite), nullptr);
  write.slices = out;
  write.checksum_out = &sent;
  ASSERT_TRUE(One(write).ok());
  TransferOp read = Op(Cap(4096, whole.size(), AccessOp::kRead), nullptr);
  read.slices = in;
  read.checksum_out = &got;
  ASSERT_TRUE(One(read).ok());
  EXPECT_EQ(sent, HashValue(whole.data(), whole.size()));
  EXPECT_EQ(got, sent);
  std::vector<std::byte> joined;
  for (const BufferSlice& b : in) joined.insert(joined.end(), b.data, b.data + b.length);
  EXPECT_EQ(joined, whole);
  // Slices that do not sum to the range, or an empty one, are refused.
  read.slices = std::span(in).first(2);
  EXPECT_EQ(One(read).code(), ErrorCode::kInvalidArgument);
  std::vector<BufferSlice> empty = in;
  empty.push_back({back.data(), 0});
  read.slices = empty;
  EXPECT_EQ(One(read).code(), ErrorCode::kInvalidArgument);
}

TEST_F(TcpTransportTest, RefusedRequestsAreAnsweredAndTheServerKeepsServing) {
  std::vector<std::byte> buf = Pattern(4096, 1);
  struct Case {
    const char* name;
    TransferOp op;
    ErrorCode want;
  };
  std::vector<Case> cases;
  {
    Capability forged = Cap(0, buf.size(), AccessOp::kWrite);
    forged.tag[0] ^= 1;
    cases.push_back({"forged", Op(forged, buf.data()), ErrorCode::kCapabilityInvalid});
  }
  {
    Capability wide = Cap(0, buf.size() - 1, AccessOp::kRead);
    wide.length += 1;  // old tag
    cases.push_back({"widened", Op(wide, buf.data()), ErrorCode::kCapabilityInvalid});
  }
  cases.push_back({"expired", Op(Cap(0, buf.size(), AccessOp::kWrite, -1), buf.data()),
                   ErrorCode::kLeaseExpired});
  {
    Capability read_cap = Cap(0, buf.size(), AccessOp::kRead);
    read_cap.op = AccessOp::kWrite;  // a read capability used to write
    cases.push_back(
        {"read cap used to write", Op(read_cap, buf.data()), ErrorCode::kCapabilityInvalid});
  }
  cases.push_back({"wrong segment",
                   Op(Cap(0, buf.size(), AccessOp::kWrite, 10000, kSegmentId + 1), buf.data()),
                   ErrorCode::kSegmentNotFound});
  cases.push_back({"out of bounds",
                   Op(Cap(kSegmentSize - 100, buf.size(), AccessOp::kRead), buf.data()),
                   ErrorCode::kInvalidArgument});
  for (const Case& c : cases) {
    Status s = One(c.op);
    EXPECT_EQ(s.code(), c.want) << c.name << ": " << s.ToString();
    EXPECT_NE(s.message().find(endpoint_), std::string::npos) << s.message();
    ExpectStillServes();
  }
}

TEST_F(TcpTransportTest, RefusedWriteInAPipelineLeavesItsNeighboursIntact) {
  auto one_lane = MakeTcpTransport({.lanes = 1});
  std::vector<std::byte> a = Pattern(300 << 10, 1), b = Pattern(300 << 10, 2),
                         c = Pattern(300 << 10, 3);
  Capability forged = Cap(0, b.size(), AccessOp::kWrite);
  forged.tag[5] ^= 0x40;
  std::vector<TransferOp> ops = {Op(Cap(0, a.size(), AccessOp::kWrite), a.data()),
                                 Op(forged, b.data()),
                                 Op(Cap(1 << 20, c.size(), AccessOp::kWrite), c.data())};
  std::vector<Status> r = one_lane->Execute(ops, 5000);
  EXPECT_TRUE(r[0].ok()) << r[0].ToString();
  EXPECT_EQ(r[1].code(), ErrorCode::kCapabilityInvalid) << r[1].ToString();
  EXPECT_TRUE(r[2].ok()) << r[2].ToString();
  EXPECT_EQ(std::memcmp(segment_->data(), a.data(), a.size()), 0);
  EXPECT_EQ(std::memcmp(segment_->data() + (1 << 20), c.data(), c.size()), 0);
}

TEST_F(TcpTransportTest, GarbageBytesCloseOnlyThatConnection) {
  asio::io_context io;
  tcp::socket raw(io);
  asio::error_code ec;
  raw.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), server_->port()), ec);
  ASSERT_FALSE(ec) << ec.message();
  std::vector<uint8_t> garbage(300, 0x5a);
  asio::write(raw, asio::buffer(garbage), ec);
  ASSERT_FALSE(ec) << ec.message();
  // The server answers with a parse error, then closes the connection.
  std::vector<uint8_t> reply;
  std::array<uint8_t, 512> chunk;
  for (;;) {
    size_t n = raw.read_some(asio::buffer(chunk), ec);
    reply.insert(reply.end(), chunk.begin(), chunk.begin() + n);
    if (ec) break;
  }
  EXPECT_TRUE(ec == asio::error::eof || ec == asio::error::connection_reset) << ec.message();
  ASSERT_GE(reply.size(), wire::kResponseHeaderSize);
  StatusOr<wire::ResponseHeader> h = wire::DecodeResponse(reply.data());
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_EQ(h->code, ErrorCode::kParseError);
  ExpectStillServes();
}

TEST_F(TcpTransportTest, DeadPeerTimesOut) {
  // Listens (the kernel completes handshakes) but never reads or replies.
  asio::io_context io;
  tcp::acceptor silent(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  std::string dead = "127.0.0.1:" + std::to_string(silent.local_endpoint().port());
  std::vector<std::byte> small(100), big = Pattern(8 << 20, 5);
  std::vector<TransferOp> ops = {
      {dead, signer_->Sign(dead, 1, 0, small.size(), AccessOp::kRead, UnixNowMs() + 10000),
       small.data()},
      // Big enough to fill both socket buffers, so the writer blocks too.
      {dead, signer_->Sign(dead, 1, 0, big.size(), AccessOp::kWrite, UnixNowMs() + 10000),
       big.data()}};
  std::vector<Status> r = MakeTcpTransport({.lanes = 1})->Execute(ops, 300);
  for (const Status& s : r) EXPECT_EQ(s.code(), ErrorCode::kTimeout) << s.ToString();
}

// One op alone, a read and a write, each held up by the peer: the deadline
// holds for both.
TEST_F(TcpTransportTest, SingleOpsTimeOutOnASilentPeer) {
  asio::io_context io;
  tcp::acceptor silent(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  std::string dead = "127.0.0.1:" + std::to_string(silent.local_endpoint().port());
  std::unique_ptr<Transport> t = MakeTcpTransport({.lanes = 1});
  std::vector<std::byte> small(100), big = Pattern(8 << 20, 5);
  TransferOp read{dead,
                  signer_->Sign(dead, 1, 0, small.size(), AccessOp::kRead, UnixNowMs() + 10000),
                  small.data()};
  EXPECT_EQ(t->Execute(std::span(&read, 1), 300)[0].code(), ErrorCode::kTimeout);
  // Never read by the peer: once both socket buffers are full the send cannot
  // finish (and if they take it all, no answer ever comes).
  TransferOp write{dead,
                   signer_->Sign(dead, 1, 0, big.size(), AccessOp::kWrite, UnixNowMs() + 10000),
                   big.data()};
  EXPECT_EQ(t->Execute(std::span(&write, 1), 300)[0].code(), ErrorCode::kTimeout);
}

// A transport with a stop switch: an op waiting on a silent peer ends with
// kClosed once the switch is set, not at its (here a minute's) timeout, and a
// later op fails at once.
TEST_F(TcpTransportTest, TheStopSwitchEndsAWaitForASilentPeer) {
  asio::io_context io;
  tcp::acceptor silent(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  std::string dead = "127.0.0.1:" + std::to_string(silent.local_endpoint().port());
  std::atomic<bool> stop{false};
  std::unique_ptr<Transport> t = MakeTcpTransport({.lanes = 1, .stop = &stop});
  std::vector<std::byte> small(100);
  TransferOp read{dead,
                  signer_->Sign(dead, 1, 0, small.size(), AccessOp::kRead, UnixNowMs() + 90000),
                  small.data()};
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    stop.store(true);
  });
  const Status waited = t->Execute(std::span(&read, 1), 60000)[0];
  stopper.join();
  EXPECT_EQ(waited.code(), ErrorCode::kClosed) << waited.ToString();
  EXPECT_EQ(t->Execute(std::span(&read, 1), 60000)[0].code(), ErrorCode::kClosed);
}

// A peer that answers a read one byte at a time keeps the reader busy; the op
// must still end at its deadline, not when the peer gives up.
TEST_F(TcpTransportTest, ATricklingPeerStillTimesOut) {
  asio::io_context io;
  tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  std::string slow = "127.0.0.1:" + std::to_string(acceptor.local_endpoint().port());
  std::thread peer([&] {
    tcp::socket s(io);
    asio::error_code ec;
    acceptor.accept(s, ec);
    wire::RequestBytes request;
    asio::read(s, asio::buffer(request), ec);
    wire::ResponseBytes response;
    size_t n = wire::EncodeResponse(ErrorCode::kOk, 0, 1000, {}, response);
    asio::write(s, asio::buffer(response.data(), n), ec);
    // One byte every 20 ms for 2 s (100 of the 1000), then hang up.
    for (int i = 0; i < 100 && !ec; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      asio::write(s, asio::buffer("x", 1), ec);
    }
  });
  std::vector<std::byte> buf(1000);
  TransferOp op{slow, signer_->Sign(slow, 1, 0, buf.size(), AccessOp::kRead, UnixNowMs() + 10000),
                buf.data()};
  Status s = MakeTcpTransport({.lanes = 1})->Execute(std::span(&op, 1), 300)[0];
  peer.join();
  // kUnavailable ("closed the connection") would mean it waited for the hang-up.
  EXPECT_EQ(s.code(), ErrorCode::kTimeout) << s.ToString();
}

// The timeout bounds each transfer, not the batch (transport.h). Eight reads
// pipelined on one lane, answered 100 ms apart: each answer comes well within
// the 400 ms timeout though the batch takes twice that, so all succeed. A
// ninth, never answered, still times out.
TEST_F(TcpTransportTest, TheTimeoutBoundsEachTransferNotTheBatch) {
  asio::io_context io;
  tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  std::string slow = "127.0.0.1:" + std::to_string(acceptor.local_endpoint().port());
  constexpr int kAnswered = 8;
  std::atomic<bool> done{false};
  std::thread peer([&] {
    tcp::socket s(io);
    asio::error_code ec;
    acceptor.accept(s, ec);
    for (int i = 0; i < kAnswered && !ec; ++i) {
      wire::RequestBytes request;
      asio::read(s, asio::buffer(request), ec);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      wire::ResponseBytes response;
      size_t n = wire::EncodeResponse(ErrorCode::kOk, i, 10, {}, response);
      std::array<asio::const_buffer, 2> out{asio::buffer(response.data(), n),
                                            asio::buffer("0123456789", 10)};
      asio::write(s, out, ec);
    }
    while (!done) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  });
  std::vector<std::vector<std::byte>> bufs(kAnswered + 1, std::vector<std::byte>(10));
  std::vector<TransferOp> ops;
  for (auto& b : bufs) {
    ops.push_back(
        {slow, signer_->Sign(slow, 1, 0, 10, AccessOp::kRead, UnixNowMs() + 10000), b.data()});
  }
  std::vector<Status> r = MakeTcpTransport({.lanes = 1})->Execute(ops, 400);
  done = true;
  peer.join();
  for (int i = 0; i < kAnswered; ++i) EXPECT_TRUE(r[i].ok()) << i << ": " << r[i].ToString();
  EXPECT_EQ(r[kAnswered].code(), ErrorCode::kTimeout) << r[kAnswered].ToString();
}

// Signals every 10 ms interrupt the wait for a silent peer; a wait that
// restarted in full after each one would last until the peer hangs up at 2 s,
// and the op would fail with "closed the connection" instead of its 300 ms
// deadline.
void IgnoreSignal(int) {}

TEST_F(TcpTransportTest, SignalsDoNotExtendTheDeadline) {
  struct sigaction quiet {
  }, old{};
  quiet.sa_handler = IgnoreSignal;
  quiet.sa_flags = SA_RESTART;
  sigemptyset(&quiet.sa_mask);
  ASSERT_EQ(sigaction(SIGUSR1, &quiet, &old), 0);
  asio::io_context io;
  tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  std::string silent = "127.0.0.1:" + std::to_string(acceptor.local_endpoint().port());
  std::atomic<bool> done{false};
  std::thread peer([&] {  // accepts, never answers, hangs up after 2 s
    tcp::socket s(io);
    asio::error_code ec;
    acceptor.accept(s, ec);
    for (int i = 0; i < 200 && !done; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  });
  const pthread_t reader = pthread_self();
  std::thread signaller([&] {
    for (int i = 0; i < 300 && !done; ++i) {
      pthread_kill(reader, SIGUSR1);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
  std::vector<std::byte> buf(100);
  TransferOp op{silent,
                signer_->Sign(silent, 1, 0, buf.size(), AccessOp::kRead, UnixNowMs() + 10000),
                buf.data()};
  Status s = MakeTcpTransport({.lanes = 1})->Execute(std::span(&op, 1), 300)[0];
  done = true;
  signaller.join();
  peer.join();
  sigaction(SIGUSR1, &old, nullptr);
  EXPECT_EQ(s.code(), ErrorCode::kTimeout) << s.ToString();
}

// Polled lanes reading large payloads raise SO_RCVLOWAT; a pooled connection
// must come back with it lowered, or a later small answer would never wake
// poll() and the batch would time out.
TEST_F(TcpTransportTest, PooledLanesServeSmallOpsAfterLargeBatchedReads) {
  constexpr size_t kOps = 8, kBig = 1 << 20, kSmall = 100;
  std::vector<std::vector<std::byte>> data, back;
  std::vector<TransferOp> writes, reads;
  for (size_t i = 0; i < kOps; ++i) {
    data.push_back(Pattern(kBig, static_cast<uint32_t>(i + 40)));
    back.emplace_back(kBig);
    writes.push_back(Op(Cap(i * kBig, kBig, AccessOp::kWrite), data[i].data()));
    reads.push_back(Op(Cap(i * kBig, kBig, AccessOp::kRead), back[i].data()));
  }
  for (const Status& s : transport_->Execute(writes, 5000)) ASSERT_TRUE(s.ok()) << s.ToString();
  for (int round = 0; round < 3; ++round) {
    for (const Status& s : transport_->Execute(reads, 5000)) ASSERT_TRUE(s.ok()) << s.ToString();
    for (size_t i = 0; i < kOps; ++i) ASSERT_EQ(data[i], back[i]) << i;
    // Small ops over every pooled lane: writes (32-byte answers) and reads.
    std::vector<std::vector<std::byte>> tiny, tiny_back;
    std::vector<TransferOp> small_writes, small_reads;
    for (size_t i = 0; i < kOps; ++i) {
      tiny.push_back(Pattern(kSmall, static_cast<uint32_t>(round * 100 + i)));
      tiny_back.emplace_back(kSmall);
    }
    for (size_t i = 0; i < kOps; ++i) {
      uint64_t offset = (kOps + 1) * kBig + i * 4096;
      small_writes.push_back(Op(Cap(offset, kSmall, AccessOp::kWrite), tiny[i].data()));
      small_reads.push_back(Op(Cap(offset, kSmall, AccessOp::kRead), tiny_back[i].data()));
    }
    for (const Status& s : transport_->Execute(small_writes, 5000)) {
      ASSERT_TRUE(s.ok()) << s.ToString();
    }
    for (const Status& s : transport_->Execute(small_reads, 5000)) {
      ASSERT_TRUE(s.ok()) << s.ToString();
    }
    EXPECT_EQ(tiny, tiny_back);
  }
}

// Both ends on a chosen congestion control ("reno": in every kernel, allowed
// to every user) still move bytes intact; a server asked for an algorithm the
// kernel lacks refuses to start, by name.
TEST_F(TcpTransportTest, ChosenCongestionControlOnBothEnds) {
  // A segment of its own: the fixture's stays bound to the fixture's server.
  auto segment = SegmentMemory::Create("tcp-test-cc", 4 << 20);
  ASSERT_TRUE(segment.ok()) << segment.status().ToString();
  auto server = TcpDataServer::Start({.congestion = "reno"}, **segment, *signer_);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  std::string endpoint = "127.0.0.1:" + std::to_string((*server)->port());
  (*segment)->SetBinding(endpoint);
  (*segment)->SetId(kSegmentId);
  auto t = MakeTcpTransport({.lanes = 2, .congestion = "reno"});
  std::vector<std::byte> data = Pattern(3 << 20, 77), back(data.size());
  TransferOp w{
      endpoint,
      signer_->Sign(endpoint, kSegmentId, 0, data.size(), AccessOp::kWrite, UnixNowMs() + 10000),
      data.data()};
  TransferOp r{
      endpoint,
      signer_->Sign(endpoint, kSegmentId, 0, back.size(), AccessOp::kRead, UnixNowMs() + 10000),
      back.data()};
  ASSERT_TRUE(t->Execute(std::span(&w, 1), 5000)[0].ok());
  ASSERT_TRUE(t->Execute(std::span(&r, 1), 5000)[0].ok());
  EXPECT_EQ(data, back);

  auto refused = TcpDataServer::Start({.congestion = "no-such-cc"}, *segment_, *signer_);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("no-such-cc"), std::string::npos);
}

TEST_F(TcpTransportTest, ConnectionRefusedIsUnavailable) {
  std::string closed;
  {
    asio::io_context io;
    tcp::acceptor a(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    closed = "127.0.0.1:" + std::to_string(a.local_endpoint().port());
  }
  std::vector<std::byte> buf(10);
  TransferOp op{closed, signer_->Sign(closed, 1, 0, 10, AccessOp::kRead, UnixNowMs() + 10000),
                buf.data()};
  Status s = transport_->Execute(std::span(&op, 1), 2000)[0];
  EXPECT_EQ(s.code(), ErrorCode::kUnavailable) << s.ToString();
  EXPECT_NE(s.message().find(closed), std::string::npos) << s.message();
}

TEST_F(TcpTransportTest, BadOpsAreRejectedLocally) {
  std::vector<std::byte> buf(10);
  std::vector<TransferOp> ops = {{"nonsense", Cap(0, 10, AccessOp::kRead), buf.data()},
                                 Op(Cap(0, 10, AccessOp::kRead), nullptr),
                                 Op(Cap(0, 10, AccessOp::kRead), buf.data())};
  std::vector<Status> r = transport_->Execute(ops, 2000);
  EXPECT_EQ(r[0].code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(r[1].code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(r[2].ok()) << r[2].ToString();
}

TEST_F(TcpTransportTest, StaleConnectionsAreNotReusedAfterServerRestart) {
  ExpectStillServes();  // pools a connection
  uint16_t port = server_->port();
  server_->Stop();
  server_->Stop();  // idempotent
  auto server = TcpDataServer::Start({.port = port}, *segment_, *signer_);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  server_ = std::move(*server);
  ExpectStillServes();
}

TEST_F(TcpTransportTest, ConcurrentExecuteFromFourThreads) {
  constexpr int kThreads = 4, kRounds = 20;
  constexpr size_t kSize = 256 << 10;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < kRounds; ++round) {
        std::vector<std::byte> data = Pattern(kSize, t * 1000 + round), back(kSize);
        uint64_t offset = t * 2 * kSize;
        std::vector<TransferOp> w = {Op(Cap(offset, kSize, AccessOp::kWrite), data.data()),
                                     Op(Cap(offset + kSize, kSize, AccessOp::kWrite), data.data())};
        for (const Status& s : transport_->Execute(w, 5000)) failures += !s.ok();
        std::vector<TransferOp> r = {Op(Cap(offset + kSize, kSize, AccessOp::kRead), back.data())};
        for (const Status& s : transport_->Execute(r, 5000)) failures += !s.ok();
        failures += data != back;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
}

// Fencing (tcp_server.cc): the master reuses a range once every capability
// that reaches it has expired, so a writer that stalls mid-payload (a frozen
// client) must not land bytes in the segment after its capability's expiry.
// The server answers LEASE_EXPIRED, drops the rest of the payload, and the
// connection and the server stay usable.
TEST_F(TcpTransportTest, AWriteStalledPastItsCapabilityLandsNothingAfterTheExpiry) {
  constexpr size_t kLen = 1 << 20;
  const std::vector<std::byte> data = Pattern(kLen, 21);
  asio::io_context io;
  tcp::socket raw = RawConnect(io);
  asio::error_code ec;
  wire::RequestBytes request;
  wire::EncodeRequest({1, Cap(0, kLen, AccessOp::kWrite, /*ttl_ms=*/300), kLen}, request);
  asio::write(raw, asio::buffer(request), ec);
  asio::write(raw, asio::buffer(data.data(), kLen / 2), ec);
  ASSERT_FALSE(ec) << ec.message();
  std::this_thread::sleep_for(std::chrono::milliseconds(700));  // stalled past the expiry
  asio::write(raw, asio::buffer(data.data() + kLen / 2, kLen / 2), ec);
  ASSERT_FALSE(ec) << ec.message();

  wire::ResponseBytes response;
  asio::read(raw, asio::buffer(response.data(), wire::kResponseHeaderSize), ec);
  ASSERT_FALSE(ec) << ec.message();
  StatusOr<wire::ResponseHeader> h = wire::DecodeResponse(response.data());
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_EQ(h->code, ErrorCode::kLeaseExpired);
  asio::read(raw, asio::buffer(response.data(), h->message_length), ec);  // the error text
  ASSERT_FALSE(ec) << ec.message();
  const std::vector<std::byte> zeros(kLen / 2);
  EXPECT_EQ(std::memcmp(segment_->data() + kLen / 2, zeros.data(), zeros.size()), 0)
      << "bytes sent after the capability expired reached the segment";

  // The same connection is in sync: the next request on it is served.
  const std::vector<std::byte> small = Pattern(100, 22);
  wire::EncodeRequest({2, Cap(4 << 20, small.size(), AccessOp::kWrite), small.size()}, request);
  asio::write(raw, asio::buffer(request), ec);
  asio::write(raw, asio::buffer(small.data(), small.size()), ec);
  asio::read(raw, asio::buffer(response.data(), wire::kResponseHeaderSize), ec);
  ASSERT_FALSE(ec) << ec.message();
  h = wire::DecodeResponse(response.data());
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->code, ErrorCode::kOk);
  EXPECT_EQ(h->request_id, 2u);
  EXPECT_EQ(std::memcmp(segment_->data() + (4 << 20), small.data(), small.size()), 0);
  ExpectStillServes();
}

// The same for a reader that stops reading: the server sends segment bytes
// only while the capability lives, then abandons the request (closing the
// connection, since the header already promised the full length).
TEST_F(TcpTransportTest, AReadStalledPastItsCapabilitySendsNothingAfterTheExpiry) {
  constexpr size_t kLen = 24 << 20;  // far more than the loopback socket buffers hold
  asio::io_context io;
  tcp::socket raw = RawConnect(io);
  asio::error_code ec;
  wire::RequestBytes request;
  wire::EncodeRequest({1, Cap(0, kLen, AccessOp::kRead, /*ttl_ms=*/300), 0}, request);
  asio::write(raw, asio::buffer(request), ec);
  ASSERT_FALSE(ec) << ec.message();
  std::this_thread::sleep_for(std::chrono::milliseconds(700));  // not reading past the expiry

  // A server that kept sending would leave the connection open: bound the wait.
  timeval patience{.tv_sec = 5, .tv_usec = 0};
  ASSERT_EQ(::setsockopt(raw.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof patience),
            0);
  std::vector<uint8_t> buffer(1 << 20);
  size_t total = 0;
  for (;;) {
    size_t n = raw.read_some(asio::buffer(buffer), ec);
    total += n;
    if (ec) break;
  }
  EXPECT_LT(total, wire::kResponseHeaderSize + kLen) << "the whole range was sent after expiry";
  ExpectStillServes();
}

}  // namespace
}  // namespace crescent::transfer
