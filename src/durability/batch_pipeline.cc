#include "durability/batch_pipeline.h"

namespace crescent::durability {

BatchPipeline::BatchPipeline(master::MasterService& m, size_t batch) : m_(m) {
  for (auto& b : batches_) b.resize(batch);
  applier_ = std::thread([this] { ApplyLoop(); });
}

BatchPipeline::~BatchPipeline() { Stop(); }

Status BatchPipeline::Commit() {
  if (++filled_ == batches_[filling_].size()) Hand();
  return Status::Ok();
}

void BatchPipeline::Hand() {
  std::unique_lock lock(mu_);
  busy_[filling_] = true;
  queue_.emplace_back(filling_, filled_);
  cv_.notify_all();
  filling_ ^= 1;
  filled_ = 0;
  cv_.wait(lock, [&] { return !busy_[filling_]; });
}

uint64_t BatchPipeline::Finish() {
  if (filled_ != 0) Hand();
  {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return !busy_[0] && !busy_[1]; });
  }
  Stop();
  return applied_;
}

void BatchPipeline::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (applier_.joinable()) applier_.join();
}

void BatchPipeline::ApplyLoop() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (stop_) return;  // Finish waits for the queue to empty before it stops
    const auto [batch, records] = queue_.front();
    queue_.pop_front();
    lock.unlock();
    m_.ApplyRestoredBatch({batches_[batch].data(), records});
    lock.lock();
    applied_ += records;
    busy_[batch] = false;
    cv_.notify_all();
  }
}

}  // namespace crescent::durability
