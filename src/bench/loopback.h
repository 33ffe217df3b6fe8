// Loopback TCP socket pairs for the raw references of `crescent bench` (and of
// perf/tcp_path_perf): no gRPC, no framing beyond what each measurement sends.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "crescent/status.h"

namespace crescent::bench {

// A connected pair, TCP_NODELAY on both ends; closed on destruction.
struct SocketPair {
  int client = -1;
  int server = -1;
  SocketPair() = default;
  SocketPair(const SocketPair&) = delete;
  SocketPair& operator=(const SocketPair&) = delete;
  ~SocketPair();
  // Wakes any thread blocked on either end (after a failure).
  void Shutdown();
};

// `n` pairs over 127.0.0.1 through one listener on an ephemeral port.
// `congestion`: TCP_CONGESTION of both ends ("": the system's default), so a
// reference runs under the same algorithm as the connections it judges.
StatusOr<std::vector<std::unique_ptr<SocketPair>>> LoopbackPairs(
    int n, const std::string& congestion = "");

// Blocking full writes and reads; false on error or end of stream.
bool WriteAll(int fd, const std::byte* p, size_t n);
bool ReadAll(int fd, std::byte* p, size_t n);

// The i-th `size`-byte chunk of `source`, cycling (source holds at least one).
inline const std::byte* Chunk(std::span<const std::byte> source, uint64_t size, uint64_t i) {
  return source.data() + (i % (source.size() / size)) * size;
}

}  // namespace crescent::bench
