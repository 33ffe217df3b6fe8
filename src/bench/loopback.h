// Loopback TCP socket pairs for the raw references of `crescent bench` (and of
// perf/tcp_path_perf): no gRPC, no framing beyond what each measurement sends.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/fd.h"
#include "crescent/status.h"

namespace crescent::bench {

// A connected pair, TCP_NODELAY on both ends; closed on destruction.
struct SocketPair {
  ScopedFd client;
  ScopedFd server;
  // Wakes any thread blocked on either end (after a failure).
  void Shutdown();
};

// `n` pairs over 127.0.0.1 through one listener on an ephemeral port.
// `congestion`: TCP_CONGESTION of both ends ("": the system's default), so a
// reference runs under the same algorithm as the connections it judges.
StatusOr<std::vector<std::unique_ptr<SocketPair>>> LoopbackPairs(
    int n, const std::string& congestion = "");

// A blocking full read; false on error or end of stream. (Writes:
// common/fd.h's WriteAll.)
bool ReadAll(int fd, std::byte* p, size_t n);

// The i-th `size`-byte chunk of `source`, cycling (source holds at least one).
inline const std::byte* Chunk(std::span<const std::byte> source, uint64_t size, uint64_t i) {
  return source.data() + (i % (source.size() / size)) * size;
}

}  // namespace crescent::bench
