// Server side of the TCP data plane. One coroutine per connection handles its
// requests strictly one after another, which is what keeps responses in request
// order. Each thread runs its own io_context (concurrency hint 1) and every
// connection lives on one of them, dealt round-robin at accept: a request is
// read, checked and answered by one thread, with no hand-off between threads
// (asio's shared scheduler woke a second thread per request, ~6 futex calls per
// op, which on a VM cost more than the copy of a small page).
//
// Write refusal: when a write request is refused (bad capability, bounds, wrong
// segment) its payload is still on the stream. The server replies with the error
// first and then reads and discards the payload (up to kMaxDiscardBytes), so the
// connection stays in sync and the client's other pipelined ops on it still
// succeed. A refused write larger than that bound gets its reply and the
// connection is closed, so nobody can make the server drain unbounded traffic.
//
// Fencing: a capability is checked again right before each chunk of a
// transfer touches the segment, not only when the request starts: its expiry,
// and that the segment is still the mount it was resolved against
// (SegmentMemory::Fence: a remount in between stops the transfer). The master
// hands a range to another object once every capability that reaches it has
// expired (plus a grace, docs/capabilities.md), so a peer that stalls mid-transfer
// (a frozen writer, a reader that stops reading) must not move segment bytes
// after its capability's expiry. A chunk is at most kFenceStep (256 KiB),
// however much the socket holds (fenced_socket.h). A write that expires
// mid-payload gets its error reply and the rest of its payload is read and
// dropped, as for a refused write; a read that expires after part of its
// payload was sent cannot say so in-stream, so its connection is closed and
// the client sees the op fail.
//
// Stop(): every io_context.stop() + join, then the acceptor and every live
// connection socket are closed from the stopping thread (no handler can run any
// more, so that is race-free); the suspended coroutine frames are destroyed with
// the io_contexts.
#include "transfer/tcp_server.h"

#include "common/value_hash.h"
#include "transfer/copy_executor.h"

#include <algorithm>
#include <array>
#include <asio/co_spawn.hpp>
#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/read.hpp>
#include <asio/redirect_error.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/write.hpp>
#include <chrono>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "common/endpoint.h"
#include "common/tsan.h"
#include "transfer/asio_server.h"
#include "transfer/congestion.h"
#include "transfer/connection_table.h"
#include "transfer/fenced_socket.h"
#include "transfer/wire.h"

namespace crescent::transfer {
namespace {

using asio::ip::tcp;
constexpr uint64_t kMaxDiscardBytes = 64ull << 20;
constexpr size_t kDiscardChunk = 64 << 10;

// Exceptions (only bad_alloc is plausible: all I/O uses error codes) end the
// coroutine and so the connection; they never reach the io_context thread.
void IgnoreException(std::exception_ptr) {}

// A transfer's fence whose every check, made before each chunk moves, also
// marks the connection active: a long transfer is not idle.
template <typename Fence>
struct TouchingFence {
  const Fence& fence;
  ConnectionTable::Entry& entry;
  bool Holds() const {
    entry.Touch();
    return fence.Holds();
  }
};

// Counts a connection open for as long as its coroutine frame lives.
class CountedConnection {
 public:
  explicit CountedConnection(TransferMetrics* m) : m_(m) {
    if (m_) m_->TcpConnectionOpened();
  }
  ~CountedConnection() {
    if (m_) m_->TcpConnectionClosed();
  }
  CountedConnection(const CountedConnection&) = delete;
  CountedConnection& operator=(const CountedConnection&) = delete;

 private:
  TransferMetrics* m_;
};

uint64_t NsSince(std::chrono::steady_clock::time_point start) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
          .count());
}

}  // namespace

struct TcpDataServer::Impl {
  Impl(SegmentSet segs, const CapabilitySigner& sig)
      : segments(std::move(segs)), signer(sig), copier(segments, signer) {}

  asio::awaitable<void> Accept();
  asio::awaitable<void> Serve(tcp::socket socket, size_t thread);

  SegmentSet segments;
  CapabilitySigner signer;  // a copy: the caller's need not outlive the server
  CopyExecutor copier;      // copy requests (tier moves), over segments and signer
  // Declared before ios so that coroutine frames destroyed with them can still
  // unregister their sockets.
  std::string congestion;  // TCP_CONGESTION for accepted connections
  TransferMetrics* metrics = nullptr;
  std::unique_ptr<ConnectionTable> connections;
  ConnectionTable::Listener listener{0};  // the data port's connections
  std::mutex mu;                          // guards stopped
  bool stopped = false;
  uint16_t port = 0;  // the bound port, kept so port() works after Stop()
  std::vector<std::unique_ptr<asio::io_context>> ios;  // one per thread; [0] accepts
  size_t next_io = 0;                                  // round-robin, Accept() only
  std::unique_ptr<tcp::acceptor> acceptor;
  std::vector<std::thread> threads;
};

asio::awaitable<void> TcpDataServer::Impl::Accept() {
  for (;;) {
    asio::error_code ec;
    const size_t thread = next_io;
    tcp::socket socket(*ios[thread]);
    co_await acceptor->async_accept(socket, asio::redirect_error(asio::use_awaitable, ec));
    if (ec == asio::error::operation_aborted || !acceptor->is_open()) co_return;
    if (ec) {
      // E.g. EMFILE: back off briefly instead of spinning on the error.
      asio::steady_timer pause(*ios[0], std::chrono::milliseconds(10));
      co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      continue;
    }
    if (!connections->Admit(listener)) {
      RefuseConnection(socket, connections->RefusalText("the store node"));
      continue;
    }
    next_io = (next_io + 1) % ios.size();
    asio::co_spawn(*ios[thread], Serve(std::move(socket), thread), IgnoreException);
  }
}

asio::awaitable<void> TcpDataServer::Impl::Serve(tcp::socket socket, size_t thread) {
  CountedConnection counted(metrics);
  ConnectionTable::Entry entry(*connections, thread, listener, [&socket] {
    asio::error_code ignored;
    socket.shutdown(tcp::socket::shutdown_both, ignored);
    socket.close(ignored);
  });
  asio::error_code ec;
  socket.set_option(tcp::no_delay(true), ec);
  // Fenced transfers move bytes with non-blocking calls only (asio's async
  // operations are unaffected by this flag).
  socket.non_blocking(true, ec);
  (void)SetCongestionControl(socket.native_handle(), congestion);  // checked in Start()
  wire::RequestBytes request;
  wire::ResponseBytes response;
  std::unique_ptr<std::byte[]> discard;  // allocated on the first refused write
  auto use = asio::redirect_error(asio::use_awaitable, ec);
  for (;;) {
    co_await asio::async_read(socket, asio::buffer(request), use);
    if (ec) break;
    entry.Touch();
    StatusOr<wire::RequestHeader> header = wire::DecodeRequest(request.data());
    if (!header.ok()) {
      // The stream is out of sync (or not ours): say why, then hang up.
      size_t n =
          wire::EncodeResponse(header.status().code(), 0, 0, header.status().message(), response);
      co_await asio::async_write(socket, asio::buffer(response.data(), n), use);
      break;
    }
    const wire::RequestHeader& h = *header;
    const auto start = std::chrono::steady_clock::now();
    SegmentMemory::Fence fence;
    StatusOr<SegmentSet::Resolved> range =
        segments.Resolve(h.cap, h.cap.op, signer, UnixNowMs(), &fence);
    const TouchingFence<SegmentMemory::Fence> touching{fence, entry};
    Status refused;       // the reply's error, if the request is refused
    uint64_t unread = 0;  // payload bytes of a refused write still on the stream
    if (!range.ok()) {
      refused = range.status();
      unread = h.payload_length;
      if (metrics) metrics->RecordRefusal(DataPath::kTcp, RefusalReasonOf(refused.code()));
    } else if (h.cap.op == AccessOp::kCopy) {
      // A tier move the master asked for: the target follows the header.
      std::array<uint8_t, wire::kCopyTargetMax> target_bytes;
      const size_t n = static_cast<size_t>(h.payload_length);
      co_await asio::async_read(socket, asio::buffer(target_bytes.data(), n), use);
      if (ec) break;
      StatusOr<wire::CopyTarget> target = wire::DecodeCopyTarget(target_bytes.data(), n);
      refused = target.ok() ? copier.Copy(range->data, h.cap.length, fence, *target)
                            : target.status();
    } else if (h.cap.op == AccessOp::kVerify) {
      // A check the master asked for: hash the range in place.
      uint64_t expected = 0;
      co_await asio::async_read(socket, asio::buffer(&expected, sizeof expected), use);
      if (ec) break;
      const uint64_t actual = HashValue(range->data, static_cast<size_t>(h.cap.length));
      if (!fence.Holds()) {
        refused = Status(ErrorCode::kLeaseExpired,
                         "verify capability expired (or the segment was remounted)");
      } else if (actual != expected) {
        refused = Status(ErrorCode::kChecksumMismatch, "the range's bytes do not match");
      }
    } else if (h.cap.op == AccessOp::kRead) {
      TsanAcquire(range->segment);
      // Header and segment bytes in gather writes, straight from the segment.
      size_t n = wire::EncodeResponse(ErrorCode::kOk, h.request_id, h.cap.length, {}, response);
      Fenced fenced = co_await SendFenced(socket, asio::buffer(response.data(), n), range->data,
                                          static_cast<size_t>(h.cap.length), touching, ec);
      TsanRelease(range->segment);
      if (fenced == Fenced::kExpired && metrics) {
        metrics->RecordRefusal(DataPath::kTcp, RefusalReason::kExpired);
      }
      if (fenced != Fenced::kDone) break;  // expired mid-payload: the stream cannot say so
      if (metrics)
        metrics->RecordTransfer(DataPath::kTcp, DataOp::kRead, h.cap.length, NsSince(start));
      continue;
    } else {
      size_t received = 0;
      TsanAcquire(range->segment);
      Fenced fenced = co_await ReceiveFenced(socket, range->data, static_cast<size_t>(h.cap.length),
                                             touching, &received, ec);
      TsanRelease(range->segment);
      if (fenced == Fenced::kSocketError) break;
      // Acknowledged only once durable (a persistent segment; DRAM: no-op).
      if (fenced == Fenced::kDone) range->segment->Persist(range->data, h.cap.length);
      if (fenced == Fenced::kExpired) {
        refused = Status(ErrorCode::kLeaseExpired,
                         "capability expired (or the segment was remounted) after " +
                             std::to_string(received) + " of " +
                             std::to_string(h.cap.length) + " bytes were written");
        unread = h.cap.length - received;
        if (metrics) metrics->RecordRefusal(DataPath::kTcp, RefusalReason::kExpired);
      }
    }
    size_t n = wire::EncodeResponse(refused.code(), h.request_id, 0, refused.message(), response);
    co_await asio::async_write(socket, asio::buffer(response.data(), n), use);
    if (ec) break;
    if (refused.ok() && metrics) {
      metrics->RecordTransfer(DataPath::kTcp, DataOp::kWrite, h.cap.length, NsSince(start));
    }
    if (unread == 0) continue;
    if (unread > kMaxDiscardBytes) {
      socket.shutdown(tcp::socket::shutdown_send, ec);
      break;
    }
    if (!discard) discard = std::make_unique<std::byte[]>(kDiscardChunk);
    for (uint64_t left = unread; left > 0 && !ec;) {
      size_t chunk = static_cast<size_t>(std::min<uint64_t>(left, kDiscardChunk));
      co_await asio::async_read(socket, asio::buffer(discard.get(), chunk), use);
      entry.Touch();
      left -= chunk;
    }
    if (ec) break;
  }
  socket.close(ec);
}

StatusOr<std::unique_ptr<TcpDataServer>> TcpDataServer::Start(const TcpServerOptions& options,
                                                              SegmentSet segments,
                                                              const CapabilitySigner& signer) {
  if (Status s = CheckCongestionControl(options.congestion); !s.ok()) return s;
  if (options.limits.max_connections < 1) {
    return Status(ErrorCode::kInvalidArgument, "max_connections must be at least 1");
  }
  auto impl = std::make_unique<Impl>(std::move(segments), signer);
  impl->congestion = options.congestion;
  impl->metrics = options.metrics;
  int threads = options.threads > 0 ? options.threads : 1;
  impl->connections = std::make_unique<ConnectionTable>(options.limits, threads);
  for (int i = 0; i < threads; ++i) {
    impl->ios.push_back(std::make_unique<asio::io_context>(1));
    asio::co_spawn(*impl->ios.back(), impl->connections->SweepIdle(i), IgnoreException);
  }
  impl->acceptor = std::make_unique<tcp::acceptor>(*impl->ios[0]);
  asio::error_code ec;
  asio::ip::address address = asio::ip::make_address(options.host, ec);
  if (ec) {
    return Status(ErrorCode::kInvalidArgument,
                  "data server host '" + options.host + "' is not an IP address: " + ec.message());
  }
  tcp::endpoint endpoint(address, options.port);
  std::string where = HostPort(options.host, options.port);
  ec = ListenTcp(*impl->acceptor, endpoint);
  if (ec) {
    return Status(ErrorCode::kUnavailable, "cannot listen on " + where + ": " + ec.message());
  }
  impl->port = impl->acceptor->local_endpoint(ec).port();
  asio::co_spawn(*impl->ios[0], impl->Accept(), IgnoreException);
  RunEach(impl->ios, PollWindow(PollWindow::Us(0), PollWindow::Us(0)), impl->threads);
  return std::unique_ptr<TcpDataServer>(new TcpDataServer(std::move(impl)));
}

TcpDataServer::TcpDataServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

TcpDataServer::~TcpDataServer() { Stop(); }

uint16_t TcpDataServer::port() const { return impl_->port; }

void TcpDataServer::Stop() {
  {
    std::lock_guard lock(impl_->mu);
    if (impl_->stopped) return;
    impl_->stopped = true;
  }
  for (auto& io : impl_->ios) io->stop();
  for (std::thread& t : impl_->threads) t.join();
  impl_->threads.clear();
  asio::error_code ec;
  impl_->acceptor->close(ec);
  impl_->connections->CloseAll();
}

}  // namespace crescent::transfer
