// A real redis-server child process on a free loopback port, for the Redis
// side of `crescent bench` (redis_backend.h), and hiredis connections to it.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

#include "crescent/status.h"

struct redisContext;
struct redisReply;

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

// A hiredis connection to 127.0.0.1:port with a 5 s timeout (check ->err).
redisContext* ConnectRedis(int port);

struct RedisReplyDeleter {
  void operator()(redisReply* r) const;
};
using RedisReply = std::unique_ptr<redisReply, RedisReplyDeleter>;

}  // namespace crescent::bench
