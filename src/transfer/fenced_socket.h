// Fenced transfers between a TCP socket and segment memory: the data server's
// payload loops (tcp_server.cc). A transfer checks its fence (a
// SegmentMemory::Fence, or anything with `bool Holds() const`) before each
// chunk it moves, and a chunk is at most kFenceStep bytes (segment_memory.h),
// the step of the shared-memory path too. So once the fence stops holding (the
// capability expired, the segment was remounted), at most one step lands in
// or leaves the segment, however much the socket has buffered.
//
// Each chunk is moved by a non-blocking call made right after the check;
// waiting for the socket happens before the check, never between it and the
// copy. The socket must be in non-blocking mode (asio's async operations are
// unaffected by that flag).
#pragma once

#include <algorithm>
#include <array>
#include <asio/awaitable.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/redirect_error.hpp>
#include <asio/use_awaitable.hpp>
#include <cstddef>

#include "transfer/segment_memory.h"
#include "transfer/wire.h"

namespace crescent::transfer {

// The outcome of a fenced transfer: done, stopped because the fence stopped
// holding first, or a socket error (in the caller's error code).
enum class Fenced { kDone, kExpired, kSocketError };

inline bool WouldBlock(const asio::error_code& ec) {
  return ec == asio::error::would_block || ec == asio::error::try_again;
}

// Receives `length` bytes into `dst` (the segment), `*received` of them before
// the fence failed or an error. SO_RCVLOWAT (wire::PayloadLowat), set before
// each wait: the reactor reports the socket readable only once the rest of the
// payload (up to 1 MiB of it) has arrived (TCP put 4 MiB 0.6-0.8x -> 0.9-1.1x
// of the raw stream, `crescent bench all --size 4MiB`), and back to 1 for the
// next header.
template <typename Fence>
asio::awaitable<Fenced> ReceiveFenced(asio::ip::tcp::socket& socket, std::byte* dst, size_t length,
                                      const Fence& fence, size_t* received, asio::error_code& ec) {
  using Lowat = asio::socket_base::receive_low_watermark;
  auto use = asio::redirect_error(asio::use_awaitable, ec);
  Fenced out = Fenced::kDone;
  int lowat = 1;
  for (size_t done = 0; done < length;) {
    if (!fence.Holds()) {
      out = Fenced::kExpired;
      break;
    }
    done += socket.read_some(asio::buffer(dst + done, FenceStep(length - done)), ec);
    *received = done;
    if (WouldBlock(ec)) {
      if (int want = wire::PayloadLowat(length - done); want != lowat) {
        socket.set_option(Lowat(want), ec);
        lowat = want;
        if (ec) co_return Fenced::kSocketError;
      }
      co_await socket.async_wait(asio::ip::tcp::socket::wait_read, use);
    }
    if (ec) co_return Fenced::kSocketError;
  }
  if (lowat != 1) socket.set_option(Lowat(1), ec);
  co_return ec ? Fenced::kSocketError : out;
}

// Sends `header` then `length` bytes from `src` (the segment), as gather writes
// of the header and up to one step of the segment (asio's own composed write
// hands the kernel 64 KiB per call).
template <typename Fence>
asio::awaitable<Fenced> SendFenced(asio::ip::tcp::socket& socket, asio::const_buffer header,
                                   const std::byte* src, size_t length, const Fence& fence,
                                   asio::error_code& ec) {
  auto use = asio::redirect_error(asio::use_awaitable, ec);
  const size_t total = header.size() + length;
  for (size_t sent = 0; sent < total;) {
    if (!fence.Holds()) co_return Fenced::kExpired;
    std::array<asio::const_buffer, 2> out;
    if (sent < header.size()) {
      out = {header + sent, asio::buffer(src, FenceStep(length))};
    } else {
      const size_t at = sent - header.size();
      out = {asio::buffer(src + at, FenceStep(length - at)), asio::const_buffer()};
    }
    sent += socket.write_some(out, ec);
    if (WouldBlock(ec)) {
      co_await socket.async_wait(asio::ip::tcp::socket::wait_write, use);
    }
    if (ec) co_return Fenced::kSocketError;
  }
  co_return Fenced::kDone;
}

}  // namespace crescent::transfer
