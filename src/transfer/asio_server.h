// What the Asio servers (transfer/tcp_server.cc, rpc/control_server.cc) share:
// opening a listening acceptor, and one thread per io_context.
#pragma once

#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <memory>
#include <thread>
#include <vector>

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

// Starts one thread running each io_context; a work guard keeps a thread
// whose io_context has nothing to do yet from returning.
inline void RunEach(const std::vector<std::unique_ptr<asio::io_context>>& ios,
                    std::vector<std::thread>& threads) {
  for (const auto& io : ios) {
    threads.emplace_back([io = io.get()] {
      auto work = asio::make_work_guard(*io);
      io->run();
    });
  }
}

}  // namespace crescent::transfer
