// Raw loopback TCP for tests that talk to a server below the client library:
// sending garbage to a data or gRPC port and watching the server hang up.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace crescent::itest {

class RawSocket {
 public:
  RawSocket() = default;
  ~RawSocket();
  RawSocket(const RawSocket&) = delete;
  RawSocket& operator=(const RawSocket&) = delete;

  // Connects to host:port (IPv4 literal); false with errno set on failure.
  bool Connect(const std::string& host, uint16_t port);
  // Sends everything it can; false once the peer has closed (never SIGPIPE).
  bool Send(const std::string& bytes);
  // Reads until the peer closes the connection (EOF or reset) or `timeout`
  // passes; returns whether it closed. What was read is appended to `received`.
  bool ReadUntilClosed(std::chrono::milliseconds timeout, std::string* received);
  void Close();

 private:
  int fd_ = -1;
};

// A port that was free a moment ago (bound to 127.0.0.1:0, then closed).
uint16_t PickFreePort();

}  // namespace crescent::itest
