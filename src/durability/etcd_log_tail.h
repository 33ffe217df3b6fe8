// EtcdLogTail: a standby's view of the leader's log in etcd (etcd_log.h). From
// a position on, a thread of its own ranges the batches (ReadEtcdLog), then
// watches the log prefix from the revision after that range's and hands each
// new record, in order and once, to a callback. Batches go by position: a
// batch rewritten with the same content (the leader's retry) hands nothing
// twice; deletes (trims) are ignored. When the watch breaks (etcd went away,
// a member failed) or its revision was compacted, it ranges again from the
// position after the last record handed, then watches anew.
//
// Start() does the first range on the caller's thread (the callback first
// runs there); the thread then goes on. It ends, for good, when the log was trimmed past the
// position it needs (kObjectNotFound: the standby must bootstrap from a snapshot), when the log is
// damaged (kCorruptData), or when the callback fails; status() then says why. Start() answers a
// trimmed position at once.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "etcd/etcd_client.h"
#include "master/operation_log.h"

namespace crescent::durability {

struct EtcdLogTailOptions {
  std::shared_ptr<etcd::EtcdClient> etcd;
  std::string cluster;
  uint64_t from = 0;  // the first position to hand
  master::OperationLog::RecordFn fn;
  // Called once on the tail's thread when it ends on its own (not on Stop).
  std::function<void(const Status&)> on_end;
  int64_t page_keys = 16;
};

class EtcdLogTail {
 public:
  static StatusOr<std::unique_ptr<EtcdLogTail>> Start(EtcdLogTailOptions options);
  ~EtcdLogTail();  // Stop()s

  // Ends the tail within about 100 ms (or one etcd call's timeout while a
  // range is under way); no callback runs after it returns. Idempotent.
  void Stop();
  // The position after the last record handed.
  uint64_t position() const { return next_.load(std::memory_order_acquire); }
  // Why the tail ended on its own; Ok while it runs (or after Stop).
  Status status() const;
  // How many times it ranged again (a broken or compacted watch).
  uint64_t reranges() const { return reranges_.load(std::memory_order_acquire); }

 private:
  explicit EtcdLogTail(EtcdLogTailOptions options) : options_(std::move(options)) {}
  void Run();
  // Ranges from position() on; *revision: the range's revision.
  Status CatchUp(int64_t* revision);
  // Hands what the watch from `revision` + 1 brings until it breaks (Ok: range
  // again) or the tail must end (the error).
  Status Follow(int64_t revision);
  Status Hand(uint64_t position, std::string_view record);

  const EtcdLogTailOptions options_;
  std::atomic<uint64_t> next_{0};
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> reranges_{0};
  mutable std::mutex mu_;  // guards error_
  Status error_;
  bool callback_failed_ = false;  // the tail's thread alone (Start's before it)
  int64_t first_revision_ = 0;    // of Start()'s range, where Run() watches from
  std::thread thread_;
};

}  // namespace crescent::durability
