// EtcdOperationLog: the leader's operation log (master/operation_log.h) kept in
// etcd, so that standbys can tail it (etcd_log_tail.h) and take over with
// nothing acknowledged lost (docs/ha.md, "The log in etcd").
//
// Keys. The log is a run of batches, each one key LogKey(cluster, P)
// (etcd/cluster_keys.h: "/crescent/NAME/log/" + P in 16 hex digits), P the
// position of its first record; its value is records framed as in the file
// log (log_frame.h), back to back. A position counts framed bytes, as the
// file log's does: a batch ends at P + its value's size, where the next one
// starts.
//
// Group commit. Append() frames the record into a pending buffer. Sender
// threads (max_in_flight of them) cut what is pending at record boundaries
// into values of at most `batch_bytes` (under etcd's 1.5 MiB request limit)
// and write each in its own transaction guarded by the leadership
// (Leadership::GuardedTxn). Up to max_in_flight batches are under way at
// once (default 1: one transaction at a time). The committed position
// advances over batches in position order only, and every wait ("always" is
// the only sync policy: WaitDurable and SyncThrough are the same) returns
// once its records, and all before them, are committed in etcd.
//
// No gap. A batch sent while the one before it is not known committed also
// compares that its predecessor's key is there (version > 0): where etcd
// gets the two the other way round, the later one is refused and nothing of
// it lands. The failure branch ranges the leader key (GuardedTxn's) and the
// batch's own key; with the leader key still this leadership's, a refusal
// means "arrived before its predecessor" (counted in Stats().reordered), and
// the batch is sent again, same key, same value, once the predecessor
// committed; no batch behind a refused one goes until it is sent again. A
// batch's own key already there (an earlier try landed, and its predecessor
// was trimmed since) counts as committed. So a key is in etcd only when
// every key before it is (or was, before a trim): a reader never meets a gap.
//
// Retries. A transaction that failed with a timeout or an unreachable etcd
// may or may not have landed. Its sender retries that same key with that
// same value (never re-cut) while the leadership is Held(): a rewrite of a key
// with the content it already has changes nothing a reader sees, since
// readers go by position and skip what they already handed.
//
// In flight or not. Where etcd's own work per transaction is what takes the
// time (a local etcd: a WAL fsync and ~0.5 ms of its CPU on the development
// machine), more batches in flight means smaller batches, one transaction's
// time shared by two, and refused reorderings, and the log is slower
// (docs/ha.md, "Puts with the log in etcd"). They are meant for an etcd a
// network hop away, where a transaction's time is mostly the round trip
// (not measured yet).
//
// Fencing. A guarded transaction refused because the leader key is no longer
// this leadership's, or an etcd that stays unreachable until Held() ends,
// fails the log for good: every later Append, WaitDurable and SyncThrough
// answers kUnavailable "no longer the leader of cluster NAME: ...", nothing
// more is written, and the engine acknowledges nothing more (a put whose wait
// fails is undone). Other refusals (etcd's space quota, a request too large)
// fail the log the same way with etcd's own error.
//
// Opening continues at the end: the newest key's position plus its value's
// size. TruncateBefore(p) deletes, guarded, the batches that end at or before
// p but always keeps the newest one, so that a reopen still finds the end.
// Deleting keys does not shrink etcd's history: the caller compacts
// (EtcdClient::Compact) at a revision no standby still needs.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "durability/log_frame.h"
#include "etcd/etcd_client.h"
#include "etcd/leadership.h"
#include "master/operation_log.h"
#include "metrics/histogram.h"

namespace crescent::durability {

struct EtcdLogOptions {
  std::shared_ptr<etcd::EtcdClient> etcd;
  std::shared_ptr<etcd::Leadership> leadership;  // held by the caller while it leads
  std::string cluster;
  // Largest value of one key (one transaction each); a record bigger than
  // this is refused by Append.
  uint64_t batch_bytes = uint64_t{1} << 20;
  // Keys per range when reading (each up to batch_bytes).
  int64_t page_keys = 16;
  // Where positions start when the cluster has no log yet.
  uint64_t start_position = 0;
  // Batches whose transactions may be under way at once (1 to 64), each
  // sent by a thread of its own.
  int max_in_flight = 1;
  // Tests only: runs on the sending thread before each try of the batch at
  // `position` (e.g. to hold one back so that the next arrives first).
  std::function<void(uint64_t position)> before_txn;
};

struct EtcdLogStats {
  uint64_t end_position = 0;        // appended
  uint64_t committed_position = 0;  // committed in etcd
  uint64_t txns = 0;                // guarded transactions that committed a batch (one key each)
  uint64_t records = 0;             // records appended
  uint64_t retries = 0;             // transactions tried again after an etcd error
  uint64_t max_in_flight = 0;       // the most batches under way at once
  uint64_t reordered = 0;  // batches sent again because they arrived before their predecessor
};

class EtcdOperationLog final : public master::OperationLog {
 public:
  static StatusOr<std::unique_ptr<EtcdOperationLog>> Open(EtcdLogOptions options);
  ~EtcdOperationLog() override;  // commits what was appended while it still leads

  StatusOr<uint64_t> Append(std::string_view record) override;
  Status WaitDurable(uint64_t position) override;
  Status SyncThrough(uint64_t position) override;
  uint64_t synced_position() const override;
  Status ReadFrom(uint64_t position, const RecordFn& fn) override;
  Status TruncateBefore(uint64_t position) override;
  uint64_t end_position() const override;
  EtcdLogStats Stats() const;
  // How long each committed batch's transaction took, sent to answered (ns).
  metrics::HistogramSnapshot CommitLatency() const { return commit_latency_.Snapshot(); }
  // The error that failed the log; Ok while it works.
  Status error() const;

 private:
  // A batch cut from what was appended: one key, one transaction (retried
  // and, if it arrived before its predecessor, sent again).
  struct Batch {
    uint64_t start = 0;
    std::string value;
    bool sending = false;    // a sender has it under way
    bool done = false;       // committed in etcd
    bool reordered = false;  // refused for arriving before its predecessor
  };
  // What one try of a batch's transaction came to.
  enum class Sent { kCommitted, kBeforePredecessor };

  explicit EtcdOperationLog(EtcdLogOptions options) : options_(std::move(options)) {}
  void SendLoop();  // each sender thread's
  // The batch a sender is to send next (cut from pending_ when none waits and
  // the window has room), and the position of the one before it while that
  // is not known committed; nullptr when there is none. Under mu_.
  Batch* NextToSendLocked(std::optional<uint64_t>* predecessor);
  // Marks `b` committed and acknowledges the batches in front that all are.
  void CommittedLocked(Batch* b);
  // Writes one batch (key at `start`, `value`), guarded by the leadership and,
  // when `predecessor` is set, by that key being there; retries while the
  // leadership is held. The error that fails the log otherwise.
  StatusOr<Sent> SendBatch(uint64_t start, const std::string& value,
                           const std::optional<uint64_t>& predecessor);
  Status Fail(Status why);  // records the first failure, wakes everyone
  Status FailLocked(Status why);
  Status LostLeadership(const std::string& why) const;

  const EtcdLogOptions options_;
  mutable std::mutex mu_;
  std::condition_variable commit_cv_;     // wakes the senders
  std::condition_variable committed_cv_;  // wakes the waiters
  std::string pending_;                   // frames not yet cut into a batch
  uint64_t pending_start_ = 0;            // the position pending_ starts at
  std::deque<Batch> window_;              // cut and not yet acknowledged, in position order
  uint64_t in_flight_ = 0;                // batches whose transaction is under way
  uint64_t end_ = 0;                      // position after the last Append
  uint64_t committed_ = 0;                // committed in etcd, with everything before it
  bool stop_ = false;
  Status error_;  // the first failure, sticky
  EtcdLogStats stats_;
  std::vector<std::thread> senders_;
  metrics::Histogram commit_latency_{metrics::LatencyBoundsNs()};
};

// Reads the log of `cluster` in etcd from `from` on: fn(position, record) for
// each record at or after `from`, in order, through ranges of `page_keys`
// keys. *end (optional): the position after the last batch read (`from` when
// none); *revision (optional): the etcd revision of the last range, the one a
// watch for what follows starts after. kObjectNotFound when the log was
// trimmed past `from` (its first batch starts after it); kCorruptData for a
// gap between batches or a batch whose frames do not check.
Status ReadEtcdLog(etcd::EtcdClient& etcd, const std::string& cluster, uint64_t from,
                   int64_t page_keys, const master::OperationLog::RecordFn& fn, uint64_t* end,
                   int64_t* revision);

// Where the log of `cluster` in etcd begins: its first batch's position, or
// nullopt when it holds no batch.
StatusOr<std::optional<uint64_t>> EtcdLogFirst(etcd::EtcdClient& etcd, const std::string& cluster);

// Hands the records of one batch (`key`, `value`) that lie at or after `from`
// to fn. *expect: where the batch must start (kAnyStart: anywhere), set to
// where it ends; kCorruptData for another start or frames that do not check.
// Shared by ReadEtcdLog and the tail's watch.
inline constexpr uint64_t kAnyStart = UINT64_MAX;
Status HandEtcdLogBatch(const std::string& cluster, const std::string& key,
                        const std::string& value, uint64_t from, uint64_t* expect,
                        const master::OperationLog::RecordFn& fn);

}  // namespace crescent::durability
