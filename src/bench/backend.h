// A system under test, as the `crescent bench` skeletons (driver.h) see it:
// `connections()` independent connections, one per client thread, each with its
// own buffer, and the calls the workloads time. Crescent (crescent_backend.h)
// and Redis (redis_backend.h) implement it, so both run the same loops.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "crescent/status.h"

namespace crescent::bench {

// The timed operations, in the order the put-get phases run them.
enum class Op { kPut = 0, kGet = 1, kBatchPut = 2, kBatchGet = 3, kExists = 4, kPrefix = 5 };

class Backend {
 public:
  virtual ~Backend() = default;

  // Row labels: of put-get rows ("crescent-tcp", "redis") and of exists rows.
  virtual std::string system() const = 0;
  virtual std::string exists_system() const = 0;
  // The progress label of `op` ("crescent-tcp batch put", "redis pipelined SET").
  virtual std::string Label(Op op) const = 0;
  virtual int connections() const = 0;
  // Connection c's buffer: room for one batch of the largest object size
  // (null when the options had no sizes).
  virtual std::byte* buffer(int c) = 0;

  // Timed. Connection c puts keys[j] from bufs[j] (`size` bytes each) or gets
  // them into bufs[j] (capacity `size`; a get's result is the object's size).
  // `batch`: the batch form (a batch call, a pipeline), even for one key.
  virtual std::vector<Status> Put(int c, std::span<const std::string> keys,
                                  std::span<void* const> bufs, uint64_t size, bool batch) = 0;
  virtual std::vector<StatusOr<size_t>> Get(int c, std::span<const std::string> keys,
                                            std::span<void* const> bufs, uint64_t size,
                                            bool batch) = 0;
  // One call asking all `keys`: present[i] says whether keys[i] is stored.
  virtual Status Exists(int c, std::span<const std::string> keys, std::vector<bool>& present) = 0;
  // One call: how many leading keys are stored (Crescent's BatchQueryPrefix).
  virtual StatusOr<size_t> QueryPrefix(int /*c*/, std::span<const std::string> /*keys*/) {
    return Status(ErrorCode::kUnsupported, system() + " has no prefix query");
  }
  // Untimed, after each put or get: frees what the call kept for its results
  // (as the skeleton frees the returned vectors after the clock stops).
  virtual void Release(int /*c*/) {}

  // Untimed. Stores `keys` with small values (the exists pool), removes keys.
  virtual Status Store(std::span<const std::string> keys, uint64_t value_size) = 0;
  virtual void Remove(int c, std::span<const std::string> keys) = 0;
  // Waits until removed objects' space is free again (before a repetition).
  virtual void Settle() {}
};

}  // namespace crescent::bench
