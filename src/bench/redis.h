// A real redis-server child process on a free loopback port, and the Redis side
// of the workloads through hiredis: SET/GET of the put-get sizes (one command
// per call; batches as pipelines of `batch` SET/GET), and pipelined EXISTS of
// the exists batches. Every GET reply is copied into the client's buffer, as a
// Crescent get lands in the caller's buffer.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "bench/results.h"
#include "bench/workloads.h"

namespace crescent::bench {

class RedisServer {
 public:
  // Starts `binary` (found on $PATH) on 127.0.0.1 at a free port, without
  // persistence, and waits until it answers PING.
  static StatusOr<std::unique_ptr<RedisServer>> Start(const std::string& binary = "redis-server");
  // Stops the server (SIGTERM, then SIGKILL after 5 s) and reaps it.
  ~RedisServer();
  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  std::string version() const { return version_; }

 private:
  RedisServer() = default;
  pid_t pid_ = -1;
  int port_ = 0;
  std::string version_;
};

// A free TCP port on 127.0.0.1 (bound to port 0, read, closed).
StatusOr<int> FreeLoopbackPort();

class RedisWorkload {
 public:
  static StatusOr<std::unique_ptr<RedisWorkload>> Connect(int port,
                                                          const WorkloadOptions& options);
  ~RedisWorkload();
  // put (SET), get (GET), batch_put, batch_get (pipelined) for every size.
  StatusOr<std::vector<PhaseResult>> RunPutGet();
  // Pipelined EXISTS for every batch × miss.
  StatusOr<std::vector<PhaseResult>> RunExists();

 private:
  RedisWorkload() = default;
  struct Conn;
  WorkloadOptions o_;
  std::string prefix_;
  std::vector<std::unique_ptr<Conn>> conns_;
  std::vector<std::unique_ptr<Buffer>> buffers_;
};

}  // namespace crescent::bench
