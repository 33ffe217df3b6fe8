// Redis as a `crescent bench` backend, through hiredis: SET/GET of the put-get
// sizes (one command per call; batches as pipelines of `batch` SET/GET) and
// pipelined EXISTS of the exists batches. Every GET reply is copied into the
// connection's buffer, as a Crescent get lands in the caller's buffer.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "bench/backend.h"
#include "bench/redis.h"
#include "bench/workloads.h"

namespace crescent::bench {

class RedisBackend : public Backend {
 public:
  // options.clients connections to the redis-server on 127.0.0.1:port.
  static StatusOr<std::unique_ptr<RedisBackend>> Connect(int port, const WorkloadOptions& options);
  ~RedisBackend() override;

  std::string system() const override { return "redis"; }
  std::string exists_system() const override { return "redis"; }
  std::string Label(Op op) const override;
  int connections() const override { return static_cast<int>(conns_.size()); }
  std::byte* buffer(int c) override { return buffers_[size_t(c)]->data(); }

  std::vector<Status> Put(int c, std::span<const std::string> keys, std::span<void* const> bufs,
                          uint64_t size, bool batch) override;
  std::vector<StatusOr<size_t>> Get(int c, std::span<const std::string> keys,
                                    std::span<void* const> bufs, uint64_t size,
                                    bool batch) override;
  Status Exists(int c, std::span<const std::string> keys, std::vector<bool>& present) override;
  void Release(int c) override;

  Status Store(std::span<const std::string> keys, uint64_t value_size) override;
  void Remove(int c, std::span<const std::string> keys) override;

 private:
  struct Conn;
  RedisBackend() = default;
  std::vector<std::unique_ptr<Conn>> conns_;
  std::vector<std::unique_ptr<Buffer>> buffers_;
};

}  // namespace crescent::bench
