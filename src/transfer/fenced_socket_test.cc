// The fenced payload loops of the TCP data server (fenced_socket.h) over a real
// loopback connection and a real segment: when the fence stops holding right
// after a check (here: the segment is remounted at that very moment, the worst
// time for it), at most one step (kFenceStep) moves, however much the socket
// has buffered or would take.
#include "transfer/fenced_socket.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <asio/co_spawn.hpp>
#include <asio/io_context.hpp>
#include <asio/read.hpp>
#include <asio/write.hpp>
#include <optional>
#include <thread>
#include <vector>

#include "common/clock.h"

namespace crescent::transfer {
namespace {

using asio::ip::tcp;
constexpr uint64_t kSegmentSize = 8 << 20;
constexpr uint64_t kLength = 4 << 20;
constexpr size_t kBuffered = 1 << 20;  // what the socket holds before the transfer starts

// The segment's fence, remounting the segment right after its first check:
// the verdict of that check is the real one ("holds"); every chunk moved after
// it is moved under a fence that no longer holds.
struct RemountAfterFirstCheck {
  const SegmentMemory::Fence& fence;
  SegmentMemory& segment;
  mutable int checks = 0;
  bool Holds() const {
    const bool holds = fence.Holds();
    if (checks++ == 0) segment.SetMount(8, "127.0.0.1:2");
    return holds;
  }
};

class FencedSocketTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto signer = CapabilitySigner::Create("fenced-socket-test-secret");
    ASSERT_TRUE(signer.ok());
    signer_.emplace(*signer);
    auto segment = SegmentMemory::Create("fence-test", kSegmentSize);
    ASSERT_TRUE(segment.ok()) << segment.status().ToString();
    segment_ = std::move(*segment);
    segment_->SetMount(7, "127.0.0.1:1");
    // A receive buffer set before listening (so the window scale can use it)
    // large enough to hold what the write test sends ahead, where the
    // privilege to force it is there; elsewhere the kernel's autotuning grows
    // it during the warm-up.
    tcp::acceptor acceptor(io_);
    acceptor.open(tcp::v4());
    const int rcvbuf = 16 << 20;
    (void)::setsockopt(acceptor.native_handle(), SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf,
                       sizeof rcvbuf);
    acceptor.bind(tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    acceptor.listen();
    client_.connect(acceptor.local_endpoint());
    acceptor.accept(server_);
    server_.non_blocking(true);
  }

  // The fence of a capability for the first kLength bytes.
  SegmentMemory::Fence Resolve(AccessOp op) {
    const Capability cap = signer_->Sign("127.0.0.1:1", 7, 0, kLength, op, UnixNowMs() + 60'000);
    SegmentMemory::Fence fence;
    EXPECT_TRUE(segment_->Resolve(cap, op, *signer_, UnixNowMs(), &fence).ok());
    EXPECT_TRUE(fence.Holds());
    return fence;
  }

  asio::io_context io_;
  tcp::socket client_{io_};
  tcp::socket server_{io_};
  std::optional<CapabilitySigner> signer_;
  std::unique_ptr<SegmentMemory> segment_;
};

TEST_F(FencedSocketTest, AWriteFencedOffAfterACheckLandsAtMostOneStep) {
  // A connection that has carried a large transfer (its receive buffer grown
  // by the kernel's autotuning, as a data connection's is), on which the
  // client has sent a good part of the next payload before the server reads.
  constexpr size_t kWarmUp = 32 << 20;
  const std::vector<uint8_t> bytes(kWarmUp, 0xab);
  std::jthread sender([&] {
    asio::error_code ignored;
    asio::write(client_, asio::buffer(bytes), ignored);
    asio::write(client_, asio::buffer(bytes.data(), 2 * kBuffered), ignored);
  });
  {
    std::vector<uint8_t> sink(kWarmUp);
    server_.non_blocking(false);
    asio::read(server_, asio::buffer(sink));
    server_.non_blocking(true);
  }
  server_.set_option(asio::socket_base::receive_low_watermark(kBuffered));
  pollfd p{server_.native_handle(), POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 10'000), 1) << "the socket never held " << kBuffered << " bytes";
  server_.set_option(asio::socket_base::receive_low_watermark(1));
  int buffered = 0;
  ASSERT_EQ(::ioctl(server_.native_handle(), FIONREAD, &buffered), 0);
  // More than a step and a quarter waiting is enough to tell: a receive that
  // checked its fence once per socket read would take all of it in one read.
  // (The kernel may signal the socket readable below the low watermark once
  // its window is full: at about half a megabyte under a sanitizer.)
  ASSERT_GT(static_cast<uint64_t>(buffered), kFenceStep + kFenceStep / 4)
      << "too little buffered to tell";

  const SegmentMemory::Fence fence = Resolve(AccessOp::kWrite);
  const RemountAfterFirstCheck remount{fence, *segment_};
  size_t received = 0;
  asio::error_code ec;
  std::optional<Fenced> result;
  asio::co_spawn(io_, ReceiveFenced(server_, segment_->data(), kLength, remount, &received, ec),
                 [&](std::exception_ptr, Fenced r) { result = r; });
  io_.run();
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(*result, Fenced::kExpired);
  EXPECT_GT(received, 0u);
  EXPECT_LE(received, kFenceStep) << "bytes landed after the remount beyond one step";
  const std::vector<std::byte> zeros(kLength - received);
  EXPECT_EQ(std::memcmp(segment_->data() + received, zeros.data(), zeros.size()), 0);

  server_.close();
  client_.close();
}

TEST_F(FencedSocketTest, AReadFencedOffAfterACheckSendsAtMostOneStep) {
  std::memset(segment_->data(), 0xcd, kLength);
  const SegmentMemory::Fence fence = Resolve(AccessOp::kRead);
  const RemountAfterFirstCheck remount{fence, *segment_};
  const std::array<uint8_t, wire::kResponseHeaderSize> header{};
  asio::error_code ec;
  std::optional<Fenced> result;
  asio::co_spawn(io_,
                 SendFenced(server_, asio::buffer(header), segment_->data(), kLength, remount, ec),
                 [&](std::exception_ptr, Fenced r) { result = r; });
  io_.run();
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(*result, Fenced::kExpired);
  server_.close();  // as the server does: the stream cannot say why it stops

  std::vector<uint8_t> in(1 << 20);
  size_t total = 0;
  for (asio::error_code rec; !rec;) total += client_.read_some(asio::buffer(in), rec);
  EXPECT_GT(total, header.size());
  EXPECT_LE(total, header.size() + kFenceStep) << "segment bytes sent after the remount";
}

}  // namespace
}  // namespace crescent::transfer
