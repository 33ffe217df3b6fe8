// BatchPipeline: a restore's records decoded on the caller's thread while the
// batch before them is applied on the pipeline's own (docs/durability.md).
//
// Records are decoded straight into a batch's slots (RecordSink); a full batch
// goes to the applier thread, which hands it to
// MasterService::ApplyRestoredBatch (that spreads the shards over the cores),
// while the caller fills the other batch. So the decoding overlaps the
// applying instead of alternating with it.
//
// Invariants: batches are applied one at a time, in the order they were
// filled, and a batch's slots are written only while it is not being applied.
// Two batches: the caller fills one while the applier applies the other; the
// caller waits when both are full.
//
// Thread-safety: one caller thread (Next, Commit, Finish); mu_ guards the
// hand-over (queue_, busy_, stop_, applied_), so a batch's records written
// before it is handed are seen by the applier, and the applier's use of a
// batch ends before the caller may refill it. The engine is used only by the
// applier thread until Finish or the destructor has joined it.
#pragma once

#include <array>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "durability/record_sink.h"
#include "master/master_service.h"

namespace crescent::durability {

class BatchPipeline final : public RecordSink {
 public:
  // `batch` records per batch (RestoreOptions::batch_records): enough to keep
  // every core busy for a while, few enough to stay in cache.
  BatchPipeline(master::MasterService& m, size_t batch);
  BatchPipeline(const BatchPipeline&) = delete;
  BatchPipeline& operator=(const BatchPipeline&) = delete;
  // Without Finish (the reader failed): the batch being applied completes,
  // the rest are dropped, and the applier is joined.
  ~BatchPipeline() override;

  master::LogRecord& Next() override { return batches_[filling_][filled_]; }
  Status Commit() override;
  // Applies the records committed so far, waits until all are applied and
  // stops the applier; returns how many were applied in all.
  uint64_t Finish();

 private:
  void Hand();  // queues the batch being filled, then waits for the other one
  void ApplyLoop();
  void Stop();

  master::MasterService& m_;
  std::array<std::vector<master::LogRecord>, 2> batches_;
  size_t filling_ = 0;  // the caller's batch
  size_t filled_ = 0;   // records in it
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::pair<size_t, size_t>> queue_;  // (batch, records) to apply, in order
  std::array<bool, 2> busy_{};                   // handed and not yet applied
  bool stop_ = false;
  uint64_t applied_ = 0;
  std::thread applier_;
};

}  // namespace crescent::durability
