// ConnectionTable: the live connections of an Asio server (the store node's
// data port, tcp_server.cc; the master's lean control port and socket,
// rpc/control_server.cc), and the two bounds every such port keeps:
//
//  - At most ConnectionLimits::max_connections per listener (a TCP port or a
//    Unix socket). The accept loop asks Admit() before it serves a connection;
//    past the cap the connection gets an error answer saying so and is closed,
//    so a peer that opens connections without end costs a bounded amount.
//  - A connection on which nothing moved for idle_timeout is closed, whether
//    it sits between frames or in the middle of one (a header that claims a
//    body that never comes). Each io_context runs SweepIdle(), which looks at
//    its own connections every quarter of the timeout: one not Touch()ed
//    since its last four looks is closed, between 1 and 1.25 timeouts after
//    its last activity. A connection Touch()es after each read or write that
//    moved bytes, a plain store on its own thread: nothing on the hot path
//    arms a timer.
//
// Threads: a connection's Entry is made, touched and destroyed on its
// io_context's thread, and only that thread's sweeper closes it; CloseAll()
// runs after the threads are joined. The lists are under `mu_` all the same,
// since a coroutine frame may end elsewhere when its server stops.
#pragma once

#include <algorithm>
#include <asio/awaitable.hpp>
#include <asio/redirect_error.hpp>
#include <asio/steady_timer.hpp>
#include <asio/this_coro.hpp>
#include <asio/use_awaitable.hpp>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <list>
#include <mutex>
#include <string>
#include <vector>

#include "transfer/connection_limits.h"
#include "transfer/wire.h"

namespace crescent::transfer {

// Answers a connection past the cap with an error frame saying `why`
// (UNAVAILABLE, request id 0: no request of its own) and closes it. A fresh
// socket's send buffer takes the frame at once; nothing waits.
template <typename Socket>
void RefuseConnection(Socket& socket, const std::string& why) {
  wire::ResponseBytes bytes;
  const size_t n = wire::EncodeResponse(ErrorCode::kUnavailable, 0, 0, why, bytes);
  asio::error_code ec;
  socket.non_blocking(true, ec);
  socket.write_some(asio::buffer(bytes.data(), n), ec);
  socket.shutdown(Socket::shutdown_both, ec);
  socket.close(ec);
}

class ConnectionTable {
 public:
  // The connections one listener holds: counted up by Admit(), down when
  // their Entry ends.
  using Listener = std::atomic<size_t>;

  class Entry {
   public:
    // Registers a connection that `listener` admitted, served on io_context
    // `thread`; `close` closes its socket (on that thread, or after Stop).
    Entry(ConnectionTable& table, size_t thread, Listener& listener, std::function<void()> close)
        : table_(table), thread_(thread), listener_(listener), close_(std::move(close)) {
      std::lock_guard lock(table_.mu_);
      at_ = table_.lists_[thread_].insert(table_.lists_[thread_].end(), this);
    }
    ~Entry() {
      {
        std::lock_guard lock(table_.mu_);
        table_.lists_[thread_].erase(at_);
      }
      listener_.fetch_sub(1, std::memory_order_relaxed);
    }
    Entry(const Entry&) = delete;
    Entry& operator=(const Entry&) = delete;

    // Bytes moved on the connection: it is not idle.
    void Touch() { active_.store(true, std::memory_order_relaxed); }

   private:
    friend class ConnectionTable;
    ConnectionTable& table_;
    size_t thread_;
    Listener& listener_;
    std::function<void()> close_;
    std::list<Entry*>::iterator at_;
    std::atomic<bool> active_{true};
    int quiet_looks_ = 0;  // the sweeper's, under mu_
    bool closed_ = false;  // likewise
  };

  ConnectionTable(ConnectionLimits limits, size_t threads) : limits_(limits), lists_(threads) {}

  const ConnectionLimits& limits() const { return limits_; }

  // Whether `listener` may take one more connection; counts it if so. Called
  // by the listener's one accept loop only.
  bool Admit(Listener& listener) const {
    if (listener.load(std::memory_order_relaxed) >= limits_.max_connections) return false;
    listener.fetch_add(1, std::memory_order_relaxed);
    return true;
  }

  // Why a connection past the cap is refused, for its error answer.
  std::string RefusalText(const std::string& who) const {
    return who + " already holds " + std::to_string(limits_.max_connections) +
           " connections on this port (--max-connections); try again later";
  }

  // Closes idle connections of io_context `thread` until that io_context
  // stops; returns at once when there is no idle timeout.
  asio::awaitable<void> SweepIdle(size_t thread) {
    if (limits_.idle_timeout.count() <= 0) co_return;
    constexpr int kLooks = 4;
    const auto period = std::max(limits_.idle_timeout / kLooks, std::chrono::milliseconds(1));
    asio::steady_timer timer(co_await asio::this_coro::executor);
    for (;;) {
      timer.expires_after(period);
      asio::error_code ec;
      co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      if (ec) co_return;
      // Closing cancels the connection's pending operation; its coroutine
      // ends (and unregisters) later, when that completion runs.
      std::lock_guard lock(mu_);
      for (Entry* e : lists_[thread]) {
        if (e->active_.exchange(false, std::memory_order_relaxed)) {
          e->quiet_looks_ = 0;
        } else if (++e->quiet_looks_ >= kLooks && !e->closed_) {
          e->closed_ = true;
          e->close_();
        }
      }
    }
  }

  // Closes every connection; after the io_context threads are joined.
  void CloseAll() {
    std::lock_guard lock(mu_);
    for (auto& list : lists_) {
      for (Entry* e : list) e->close_();
    }
  }

 private:
  const ConnectionLimits limits_;
  std::mutex mu_;
  std::vector<std::list<Entry*>> lists_;  // by io_context
};

}  // namespace crescent::transfer
