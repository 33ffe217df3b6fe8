// Checks of stored replicas by their own nodes (the copier's Verify: the node
// hashes the range and compares it with the checksum recorded at PutEnd), in
// the background (RunMaintenance). Two sources queue them: a persistent
// segment taken over from a restarted node (docs/persistent-tier.md), whose
// bytes lived in a file while no process held it, every object on it; and
// readers' corruption reports (master_integrity.cc), checked first. Only
// verified bytes of a taken-over segment are served: such a replica is not
// readable (Servable) until its check passes; one whose check fails, or never
// gets a verdict, is dropped (DropReplica), the object with its last replica.
// A reported replica stays readable meanwhile (a client checks every value it
// reads anyway); a mismatch drops it, a match keeps it.
#include <algorithm>
#include <chrono>
#include <mutex>

#include "master/master_service.h"

namespace crescent::master {

void MasterService::EnqueueVerification(SegmentId segment) {
  std::vector<PendingCheck> found;
  for (const auto& shard : objects_.shards()) {
    shard->VisitCompleteInSteps([&](uint32_t slot) {
      const ObjectEntry& e = shard->entry(slot);
      for (size_t i = 0; i < e.num_replicas; ++i) {
        if (e.replica(i).segment != segment) continue;
        found.push_back({std::string(e.key_view()), e.replica(i), e.size, e.checksum});
      }
    });
  }
  verification_.EnqueueTakeOver(segment, std::move(found));
}

bool MasterService::Servable(const ReplicaSlot& r) const {
  // The mount's hold is taken before the segment is visible, so a reader
  // that sees it mounted sees the hold too.
  if (!segments_.IsMounted(r.segment)) return false;
  return verification_.Servable(r);
}

uint64_t MasterService::PendingVerifications() const {
  // Checks not settled yet (queued, or sent and unanswered), and segments
  // whose objects are still being queued: none of those objects is served.
  return verification_.holds();
}

bool MasterService::ApplyVerdict(PendingCheck& c, const Status& verdict) {
  const bool mismatch = verdict.code() == ErrorCode::kChecksumMismatch;
  if (verdict.ok() || mismatch) {
    // A stale drop (the object removed or replaced meanwhile) is refused by
    // DropReplica, and changes nothing.
    const bool dropped =
        mismatch &&
        DropReplica(c.key, c.replica.segment, c.replica.offset, c.checksum, /*corrupt=*/true).ok();
    if (c.reported) {
      if (verdict.ok()) counters_.reports_disproved.fetch_add(1, std::memory_order_relaxed);
      if (dropped) counters_.reports_confirmed.fetch_add(1, std::memory_order_relaxed);
    } else {
      (verdict.ok() ? counters_.verified_ok : counters_.verified_corrupt)
          .fetch_add(1, std::memory_order_relaxed);
    }
    return true;
  }
  if (++c.tries < kVerifyTries) {
    counters_.verify_retries.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  (c.reported ? counters_.reports_unchecked : counters_.verify_skipped)
      .fetch_add(1, std::memory_order_relaxed);
  if (!c.reported) {
    // A take-over's check that never got a verdict: its bytes are never
    // served, so the replica goes (the object with its last one) rather than
    // waiting unreadable for good. A reader's report keeps its replica.
    (void)DropReplica(c.key, c.replica.segment, c.replica.offset, c.checksum, /*corrupt=*/false);
  }
  return true;
}

void MasterService::RunVerifications(int64_t budget_ms) {
  ReplicaCopier* copier = copier_.load(std::memory_order_acquire);
  if (copier == nullptr) return;
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(budget_ms);
  // Checks that got no verdict go back in their queue after this pass, so a
  // node that did not answer is asked again at the next one, not at once.
  std::vector<PendingCheck> again;
  // A report's place leaves the queue's reported places with its verdict: a
  // later report of it is then queued anew.
  std::vector<VerificationQueue::Place> decided;
  // A stopping engine starts no check (BeginShutdown).
  while (std::chrono::steady_clock::now() < until && !stopping_.load(std::memory_order_acquire)) {
    std::vector<PendingCheck> batch = verification_.TakeBatch(kVerifyBatch);
    if (batch.empty()) break;
    std::vector<ReplicaCheck> checks;
    std::vector<size_t> asked;  // index in batch of each check
    for (size_t i = 0; i < batch.size(); ++i) {
      const std::string* endpoint = segments_.MountedEndpoint(batch[i].replica.segment);
      if (endpoint == nullptr) {
        // Its segment is gone, or detached again: a node that takes it back
        // has every object of it queued (and held) anew.
        (batch[i].reported ? counters_.reports_unchecked : counters_.verify_skipped)
            .fetch_add(1, std::memory_order_relaxed);
        if (batch[i].reported) {
          decided.emplace_back(batch[i].replica.segment, batch[i].replica.offset);
        } else {
          verification_.Settle(batch[i].replica);
        }
        continue;
      }
      checks.push_back({{batch[i].replica.segment, *endpoint, batch[i].replica.offset,
                         batch[i].size, 0},
                        batch[i].checksum});
      asked.push_back(i);
    }
    if (checks.empty()) continue;
    const std::vector<Status> done =
        copier->Verify(checks, UnixNowMs() + config_.tier_copy_timeout_ms);
    for (size_t k = 0; k < asked.size(); ++k) {
      PendingCheck& c = batch[asked[k]];
      const Status& s = k < done.size() ? done[k] : Status(ErrorCode::kInternal, "no result");
      if (!s.ok() && s.code() != ErrorCode::kChecksumMismatch &&
          stopping_.load(std::memory_order_acquire)) {
        // Perhaps the copier's close (BeginShutdown): no verdict, and no try
        // counted, so that the stop never drops a replica it did not check.
        again.push_back(std::move(c));
      } else if (!ApplyVerdict(c, s)) {
        again.push_back(std::move(c));
      } else if (c.reported) {
        decided.emplace_back(c.replica.segment, c.replica.offset);
      } else {
        verification_.Settle(c.replica);  // readable from now on, or dropped
      }
    }
  }
  verification_.Requeue(decided, std::move(again));
}

}  // namespace crescent::master
