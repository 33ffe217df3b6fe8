#include "master/verification_queue.h"

#include <algorithm>

namespace crescent::master {

void VerificationQueue::HoldSegment(SegmentId segment) {
  std::lock_guard lock(mu_);
  held_segments_.push_back(segment);
  holds_.fetch_add(1);
}

void VerificationQueue::ReleaseSegment(SegmentId segment) {
  std::lock_guard lock(mu_);
  ReleaseSegmentLocked(segment);
}

void VerificationQueue::ReleaseSegmentLocked(SegmentId segment) {
  auto it = std::find(held_segments_.begin(), held_segments_.end(), segment);
  if (it == held_segments_.end()) return;
  held_segments_.erase(it);
  holds_.fetch_sub(1);
}

void VerificationQueue::EnqueueTakeOver(SegmentId segment, std::vector<Check> checks) {
  std::lock_guard lock(mu_);
  for (Check& c : checks) {
    if (held_.insert(Key(c.replica)).second) holds_.fetch_add(1);
    take_overs_.push_back(std::move(c));
  }
  // Every replica is held on its own now: lift the segment's hold.
  ReleaseSegmentLocked(segment);
}

bool VerificationQueue::Report(Check c) {
  std::lock_guard lock(mu_);
  const Place place{c.replica.segment, c.replica.offset};
  if (reported_places_.contains(place)) return true;
  if (reports_.size() >= kMaxQueuedReports) return false;
  reported_places_.insert(place);
  reports_.push_back(std::move(c));
  return true;
}

std::vector<VerificationQueue::Check> VerificationQueue::TakeBatch(size_t max) {
  std::vector<Check> batch;
  std::lock_guard lock(mu_);
  for (auto* queue : {&reports_, &take_overs_}) {
    while (!queue->empty() && batch.size() < max) {
      batch.push_back(std::move(queue->front()));
      queue->pop_front();
    }
  }
  return batch;
}

void VerificationQueue::Settle(const ReplicaSlot& r) {
  std::lock_guard lock(mu_);
  if (held_.erase(Key(r)) != 0) holds_.fetch_sub(1);
}

void VerificationQueue::Requeue(std::span<const Place> decided, std::vector<Check> again) {
  if (decided.empty() && again.empty()) return;
  std::lock_guard lock(mu_);
  for (const Place& place : decided) reported_places_.erase(place);
  for (Check& c : again) (c.reported ? reports_ : take_overs_).push_back(std::move(c));
}

bool VerificationQueue::NotHeld(const ReplicaSlot& r) const {
  std::lock_guard lock(mu_);
  if (std::find(held_segments_.begin(), held_segments_.end(), r.segment) != held_segments_.end()) {
    return false;
  }
  return !held_.contains(Key(r));
}

size_t VerificationQueue::reports() const {
  std::lock_guard lock(mu_);
  return reported_places_.size();
}

}  // namespace crescent::master
