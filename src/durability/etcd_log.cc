#include "durability/etcd_log.h"

#include <algorithm>
#include <chrono>

#include "common/coding.h"
#include "etcd/cluster_keys.h"

namespace crescent::durability {
namespace {

using namespace std::chrono_literals;

// etcd refuses a request above 1.5 MiB; the key, the fence's compare and the
// framing of the request take the rest.
constexpr uint64_t kMaxBatchBytes = 1400u << 10;

// The newest key below `range_end` under the log prefix (the one at the
// largest position); nullopt-like empty key when there is none.
StatusOr<etcdserverpb::RangeResponse> LastKeyBefore(etcd::EtcdClient& etcd,
                                                    const std::string& cluster,
                                                    const std::string& range_end, bool keys_only) {
  etcdserverpb::RangeRequest r;
  r.set_key(etcd::LogPrefix(cluster));
  r.set_range_end(range_end);
  r.set_limit(1);
  r.set_sort_order(etcdserverpb::RangeRequest::DESCEND);
  r.set_sort_target(etcdserverpb::RangeRequest::KEY);
  r.set_keys_only(keys_only);
  return etcd.Range(r);
}

// Where the batch that starts at `at` in `frames` ends: as many whole frames
// as fit in `limit` bytes (at least one).
size_t CutAt(const std::string& frames, size_t at, uint64_t limit) {
  size_t end = at;
  while (end < frames.size()) {
    const size_t next = end + kFrameBytes + DecodeFixed32(frames.data() + end);
    if (end > at && next - at > limit) break;
    end = next;
  }
  return end;
}

}  // namespace

Status HandEtcdLogBatch(const std::string& cluster, const std::string& key,
                        const std::string& value, uint64_t from, uint64_t* expect,
                        const master::OperationLog::RecordFn& fn) {
  StatusOr<uint64_t> start = etcd::LogKeyPosition(cluster, key);
  if (!start.ok()) return start.status();
  if (*expect != kAnyStart && *start != *expect) {
    return Status(ErrorCode::kCorruptData, "the log of cluster " + cluster + " has a gap: batch " +
                                               key + " starts at position " +
                                               std::to_string(*start) + ", not " +
                                               std::to_string(*expect));
  }
  Status out;
  const uint64_t good = ScanFrames(value, 0, [&](uint64_t at, std::string_view payload) {
    if (out.ok() && *start + at >= from) out = fn(*start + at, payload);
  });
  if (!out.ok()) return out;
  if (good != value.size()) {
    return Status(ErrorCode::kCorruptData, "the log of cluster " + cluster + ": batch " + key +
                                               " has a bad record at byte " + std::to_string(good));
  }
  *expect = *start + value.size();
  return Status::Ok();
}

StatusOr<std::optional<uint64_t>> EtcdLogFirst(etcd::EtcdClient& etcd, const std::string& cluster) {
  etcdserverpb::RangeRequest r;
  r.set_key(etcd::LogPrefix(cluster));
  r.set_range_end(etcd::PrefixEnd(etcd::LogPrefix(cluster)));
  r.set_limit(1);
  r.set_keys_only(true);
  StatusOr<etcdserverpb::RangeResponse> got = etcd.Range(r);
  if (!got.ok()) return got.status();
  if (got->kvs().empty()) return std::optional<uint64_t>();
  StatusOr<uint64_t> first = etcd::LogKeyPosition(cluster, got->kvs(0).key());
  if (!first.ok()) return first.status();
  return std::optional<uint64_t>(*first);
}

Status ReadEtcdLog(etcd::EtcdClient& etcd, const std::string& cluster, uint64_t from,
                   int64_t page_keys, const master::OperationLog::RecordFn& fn, uint64_t* end,
                   int64_t* revision) {
  // The batch holding `from`: the last one that starts at or before it.
  StatusOr<etcdserverpb::RangeResponse> holder =
      LastKeyBefore(etcd, cluster, etcd::LogKey(cluster, from + 1), /*keys_only=*/true);
  if (!holder.ok()) return holder.status();
  etcdserverpb::RangeRequest page;
  page.set_key(holder->kvs().empty() ? etcd::LogKey(cluster, from) : holder->kvs(0).key());
  page.set_range_end(etcd::PrefixEnd(etcd::LogPrefix(cluster)));
  page.set_limit(page_keys);
  uint64_t expect = kAnyStart;
  for (;;) {
    StatusOr<etcdserverpb::RangeResponse> got = etcd.Range(page);
    if (!got.ok()) return got.status();
    if (revision != nullptr) *revision = got->header().revision();
    for (const auto& kv : got->kvs()) {
      if (expect == kAnyStart) {
        StatusOr<uint64_t> first = etcd::LogKeyPosition(cluster, kv.key());
        if (first.ok() && *first > from) {
          return Status(ErrorCode::kObjectNotFound,
                        "the log of cluster " + cluster + " was trimmed: it starts at position " +
                            std::to_string(*first) + ", after " + std::to_string(from) +
                            " (bootstrap from a snapshot)");
        }
      }
      if (Status s = HandEtcdLogBatch(cluster, kv.key(), kv.value(), from, &expect, fn); !s.ok()) {
        return s;
      }
      page.set_key(kv.key() + '\0');
    }
    if (!got->more() || got->kvs().empty()) break;
  }
  if (end != nullptr) *end = expect == kAnyStart ? from : expect;
  return Status::Ok();
}

StatusOr<std::unique_ptr<EtcdOperationLog>> EtcdOperationLog::Open(EtcdLogOptions options) {
  if (options.etcd == nullptr || options.leadership == nullptr) {
    return Status(ErrorCode::kInvalidArgument, "the etcd log needs a client and a leadership");
  }
  if (Status s = etcd::CheckClusterName(options.cluster); !s.ok()) return s;
  if (options.batch_bytes <= kFrameBytes || options.batch_bytes > kMaxBatchBytes) {
    return Status(ErrorCode::kInvalidArgument,
                  "the etcd log's batch size must be above " + std::to_string(kFrameBytes) +
                      " bytes and at most " + std::to_string(kMaxBatchBytes));
  }
  if (options.max_in_flight < 1 || options.max_in_flight > 64) {
    return Status(ErrorCode::kInvalidArgument,
                  "the etcd log's batches in flight must be 1 to 64, not " +
                      std::to_string(options.max_in_flight));
  }
  if (options.page_keys <= 0) {
    return Status(ErrorCode::kInvalidArgument, "the etcd log's page must hold a key or more");
  }
  const std::string cluster = options.cluster;
  StatusOr<etcdserverpb::RangeResponse> last =
      LastKeyBefore(*options.etcd, cluster, etcd::PrefixEnd(etcd::LogPrefix(cluster)), false);
  if (!last.ok()) return last.status();
  uint64_t end = options.start_position;
  if (!last->kvs().empty()) {
    end = kAnyStart;
    Status s = HandEtcdLogBatch(cluster, last->kvs(0).key(), last->kvs(0).value(), UINT64_MAX, &end,
                                [](uint64_t, std::string_view) { return Status::Ok(); });
    if (!s.ok()) return s;
  }
  auto log = std::unique_ptr<EtcdOperationLog>(new EtcdOperationLog(std::move(options)));
  log->end_ = log->committed_ = log->pending_start_ = end;
  log->stats_.end_position = log->stats_.committed_position = end;
  for (int i = 0; i < log->options_.max_in_flight; ++i) {
    log->senders_.emplace_back([p = log.get()] { p->SendLoop(); });
  }
  return log;
}

EtcdOperationLog::~EtcdOperationLog() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  commit_cv_.notify_all();
  for (std::thread& t : senders_) t.join();
}

Status EtcdOperationLog::LostLeadership(const std::string& why) const {
  return Status(ErrorCode::kUnavailable,
                "no longer the leader of cluster " + options_.cluster + ": " + why);
}

Status EtcdOperationLog::Fail(Status why) {
  std::lock_guard lock(mu_);
  return FailLocked(std::move(why));
}

Status EtcdOperationLog::FailLocked(Status why) {
  if (error_.ok()) error_ = std::move(why);
  committed_cv_.notify_all();
  commit_cv_.notify_all();
  return error_;
}

StatusOr<uint64_t> EtcdOperationLog::Append(std::string_view record) {
  if (record.size() + kFrameBytes > options_.batch_bytes) {
    return Status(ErrorCode::kInvalidArgument,
                  "a record of " + std::to_string(record.size()) +
                      " bytes does not fit in one batch of the etcd log (" +
                      std::to_string(options_.batch_bytes) + " bytes)");
  }
  std::lock_guard lock(mu_);
  if (!error_.ok()) return error_;
  AppendFrame(pending_, record);
  end_ += kFrameBytes + record.size();
  ++stats_.records;
  commit_cv_.notify_one();
  return end_;
}

Status EtcdOperationLog::WaitDurable(uint64_t position) {
  std::unique_lock lock(mu_);
  position = std::min(position, end_);
  committed_cv_.wait(lock, [&] { return !error_.ok() || committed_ >= position; });
  return error_;
}

Status EtcdOperationLog::SyncThrough(uint64_t position) { return WaitDurable(position); }

uint64_t EtcdOperationLog::synced_position() const {
  std::lock_guard lock(mu_);
  return committed_;
}

uint64_t EtcdOperationLog::end_position() const {
  std::lock_guard lock(mu_);
  return end_;
}

Status EtcdOperationLog::error() const {
  std::lock_guard lock(mu_);
  return error_;
}

EtcdLogStats EtcdOperationLog::Stats() const {
  std::lock_guard lock(mu_);
  EtcdLogStats s = stats_;
  s.end_position = end_;
  s.committed_position = committed_;
  return s;
}

void EtcdOperationLog::SendLoop() {
  std::unique_lock lock(mu_);
  for (;;) {
    Batch* b = nullptr;
    std::optional<uint64_t> predecessor;
    commit_cv_.wait(lock, [&] {
      return !error_.ok() || (b = NextToSendLocked(&predecessor)) != nullptr ||
             (stop_ && pending_.empty() && window_.empty());
    });
    if (!error_.ok() || b == nullptr) return;  // failed, or stopped with nothing left
    b->sending = true;
    stats_.max_in_flight = std::max(stats_.max_in_flight, ++in_flight_);
    lock.unlock();
    StatusOr<Sent> sent = SendBatch(b->start, b->value, predecessor);
    lock.lock();
    --in_flight_;
    b->sending = false;
    if (!sent.ok()) {
      (void)FailLocked(sent.status());
      return;
    }
    if (*sent == Sent::kCommitted) {
      CommittedLocked(b);
    } else {
      b->reordered = true;  // sent again once its predecessor committed
      ++stats_.reordered;
    }
    commit_cv_.notify_all();
  }
}

EtcdOperationLog::Batch* EtcdOperationLog::NextToSendLocked(std::optional<uint64_t>* predecessor) {
  // A batch goes once the one before it is committed or under way; one that
  // was refused for arriving first waits until its predecessor committed.
  // A batch behind one that waits to go again would be refused as surely.
  size_t i = 0;
  for (; i < window_.size(); ++i) {
    const Batch& b = window_[i];
    const bool after_done = i == 0 || window_[i - 1].done;
    const bool after_sent = after_done || window_[i - 1].sending;
    if (!b.sending && !b.done && (b.reordered ? after_done : after_sent)) break;
  }
  if (i == window_.size()) {
    const bool after_sent = window_.empty() || window_.back().done || window_.back().sending;
    if (pending_.empty() || !after_sent ||
        window_.size() >= static_cast<size_t>(options_.max_in_flight)) {
      return nullptr;
    }
    const size_t cut = CutAt(pending_, 0, options_.batch_bytes);
    window_.push_back(Batch{.start = pending_start_, .value = pending_.substr(0, cut)});
    pending_.erase(0, cut);
    pending_start_ += cut;
  }
  // The predecessor's key is compared only while it is not known committed
  // (acknowledged batches are in front of the window); one committed stays,
  // since a trim keeps the batch holding the committed position.
  predecessor->reset();
  if (i > 0 && !window_[i - 1].done) *predecessor = window_[i - 1].start;
  return &window_[i];
}

void EtcdOperationLog::CommittedLocked(Batch* b) {
  b->done = true;
  ++stats_.txns;
  if (b != &window_.front()) return;  // acknowledged once every batch before it is
  while (!window_.empty() && window_.front().done) {
    committed_ = window_.front().start + window_.front().value.size();
    window_.pop_front();
  }
  committed_cv_.notify_all();
}

StatusOr<EtcdOperationLog::Sent> EtcdOperationLog::SendBatch(
    uint64_t start, const std::string& value, const std::optional<uint64_t>& predecessor) {
  const std::string key = etcd::LogKey(options_.cluster, start);
  for (;;) {
    etcdserverpb::TxnRequest t;
    if (predecessor) {
      auto* c = t.add_compare();
      c->set_key(etcd::LogKey(options_.cluster, *predecessor));
      c->set_target(etcdserverpb::Compare::VERSION);
      c->set_result(etcdserverpb::Compare::GREATER);
      c->set_version(0);
    }
    auto* put = t.add_success()->mutable_request_put();
    put->set_key(key);
    put->set_value(value);
    // Refused: is the key there already (an earlier try of this same batch
    // landed, then its predecessor was trimmed)?
    auto* own = t.add_failure()->mutable_request_range();
    own->set_key(key);
    own->set_count_only(true);
    if (options_.before_txn) options_.before_txn(start);
    const auto sent = std::chrono::steady_clock::now();
    StatusOr<etcdserverpb::TxnResponse> r = options_.leadership->GuardedTxn(std::move(t));
    if (r.ok() && r->succeeded()) {
      commit_latency_.Record(static_cast<uint64_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                               sent)
              .count()));
      return Sent::kCommitted;
    }
    if (r.ok()) {
      // The failure branch's ranges: the leader key first (GuardedTxn's),
      // then this batch's key.
      const auto& leader = r->responses(0).response_range().kvs();
      if (leader.empty() || leader[0].create_revision() != options_.leadership->revision()) {
        return LostLeadership(std::string(leader.empty() ? "the leader key is gone"
                                                         : "another master holds the leader key") +
                              "; the batch at position " + std::to_string(start) +
                              " was not written");
      }
      if (r->responses(1).response_range().count() > 0) return Sent::kCommitted;
      return Sent::kBeforePredecessor;
    }
    const ErrorCode code = r.status().code();
    if (code != ErrorCode::kTimeout && code != ErrorCode::kUnavailable) {
      return Status(code, "the log of cluster " + options_.cluster +
                              " could not be written to etcd: " + r.status().message());
    }
    if (!options_.leadership->Held()) {
      return LostLeadership("etcd did not answer within the lease: " + r.status().message());
    }
    {
      std::lock_guard lock(mu_);
      ++stats_.retries;
    }
    std::this_thread::sleep_for(50ms);
  }
}

Status EtcdOperationLog::ReadFrom(uint64_t position, const RecordFn& fn) {
  // What was appended is read too, as in the file log: once committed.
  (void)WaitDurable(end_position());
  return ReadEtcdLog(*options_.etcd, options_.cluster, position, options_.page_keys, fn, nullptr,
                     nullptr);
}

Status EtcdOperationLog::TruncateBefore(uint64_t position) {
  if (Status e = error(); !e.ok()) return e;
  position = std::min(position, synced_position());
  // The batch holding `position` stays, and with it every later one: the
  // ones before it end at or before `position`. The newest always stays.
  StatusOr<etcdserverpb::RangeResponse> holder =
      LastKeyBefore(*options_.etcd, options_.cluster, etcd::LogKey(options_.cluster, position + 1),
                    /*keys_only=*/true);
  if (!holder.ok()) return holder.status();
  if (holder->kvs().empty()) return Status::Ok();
  etcdserverpb::TxnRequest t;
  auto* del = t.add_success()->mutable_request_delete_range();
  del->set_key(etcd::LogPrefix(options_.cluster));
  del->set_range_end(holder->kvs(0).key());
  StatusOr<etcdserverpb::TxnResponse> r = options_.leadership->GuardedTxn(std::move(t));
  if (!r.ok()) return r.status();
  if (!r->succeeded()) {
    return Fail(LostLeadership("the leader key is no longer ours; the log was not trimmed"));
  }
  return Status::Ok();
}

}  // namespace crescent::durability
