// What the Asio servers (transfer/tcp_server.cc, rpc/control_server.cc) share:
// opening a listening acceptor, and one polling thread per io_context.
#pragma once

#include <sched.h>

#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "transfer/poll_window.h"

namespace crescent::transfer {

// Opens `acceptor` on `endpoint` (SO_REUSEADDR) and listens; the first error.
inline asio::error_code ListenTcp(asio::ip::tcp::acceptor& acceptor,
                                  const asio::ip::tcp::endpoint& endpoint) {
  asio::error_code ec;
  if (acceptor.open(endpoint.protocol(), ec);
      !ec && (acceptor.set_option(asio::ip::tcp::acceptor::reuse_address(true), ec), !ec) &&
      (acceptor.bind(endpoint, ec), !ec)) {
    acceptor.listen(asio::socket_base::max_listen_connections, ec);
  }
  return ec;
}

// Runs `io` until it is stopped, polling it after each handler for the
// window of `spin` (poll_window.h: `base` stretched up to `max` to cover the
// gaps between a client's calls) before the thread sleeps in the reactor; a
// zero window never polls. The next request of a busy client often follows
// within microseconds: polled for, it is read at once, and the client's write
// wakes no sleeping thread (on a small VM that wake-up, an inter-processor
// interrupt to a halted vCPU, costs 5 to 40 µs). Polling the io_context,
// rather than one socket, serves every connection of the thread alike. Each
// empty poll yields the CPU: a socket's wake-up may have put this thread on
// its client's CPU (the kernel places the woken reader beside the writer where
// it knows no shared cache, as on small VMs), and a poll that does not yield
// keeps that client off it for the whole window (docs/control-plane.md, "Polling and
// the shared CPU").
inline void RunPolling(asio::io_context& io, PollWindow spin) {
  using Clock = std::chrono::steady_clock;
  auto work = asio::make_work_guard(io);
  Clock::time_point last = Clock::now();
  while (!io.stopped()) {
    if (io.poll() > 0) {
      last = Clock::now();
    } else if (Clock::now() < last + spin.window()) {
      sched_yield();
    } else if (io.run_one() > 0) {  // sleeps until something is ready
      const Clock::time_point now = Clock::now();
      spin.AfterSleep(std::chrono::duration_cast<PollWindow::Us>(now - last));
      last = now;
    }
  }
}

// Starts one thread running each io_context (RunPolling, each thread with its
// own window, from `spin`); a work guard keeps a thread whose io_context has
// nothing to do yet from returning.
inline void RunEach(const std::vector<std::unique_ptr<asio::io_context>>& ios, PollWindow spin,
                    std::vector<std::thread>& threads) {
  for (const auto& io : ios) {
    threads.emplace_back([io = io.get(), spin] { RunPolling(*io, spin); });
  }
}

}  // namespace crescent::transfer
