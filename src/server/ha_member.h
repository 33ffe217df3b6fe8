// HaMember: one master's part in a cluster of masters on etcd (docs/ha.md).
// While another leads, it is a hot standby: a tail of the leader's log in
// etcd (durability/etcd_log_tail.h) applies each record to this master's
// engine as it is committed (MasterService::ApplyRestored: the engine stays in
// its restore state, serving nothing, running no maintenance). Meanwhile it
// campaigns for the leader key (etcd/leadership.h). Once it holds the key,
// AwaitLeadership() stops the tail, applies what the old leader committed
// after the tail's last record (nothing more can come: every write to the log
// is guarded by the leader key, now this master's), and opens the log for
// writing from its end. The caller then finishes the restore (the nodes take
// their segments over), starts serving, and Publish()es its endpoints: only
// then do clients and nodes follow it.
//
// Thread-safety: Cancel(), Held(), applied_position() and the counters from
// any thread; AwaitLeadership() and Publish() from one.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "crescent/status.h"
#include "durability/etcd_log.h"
#include "durability/etcd_log_tail.h"
#include "etcd/cluster_keys.h"
#include "etcd/etcd_client.h"
#include "etcd/leadership.h"
#include "master/master_service.h"
#include "server/ha_snapshots.h"

namespace crescent::server {

// What a master knows of its cluster (Stats, the status page, /metrics).
struct ClusterMemberView {
  etcd::MemberInfo info;  // as the member last wrote it (every membership period)
  bool leader = false;
  uint64_t lag_records = 0;  // records the leader has that it had not applied
  double lag_seconds = 0;    // how long it has been behind (0: caught up)
};
struct ClusterView {
  std::string cluster;
  std::string etcd;
  std::string self_id;
  std::string leader_id;  // empty: none known
  bool leads = false;
  uint64_t leader_changes = 0;  // changes of the leader this process saw
  std::vector<ClusterMemberView> members;
  // The leader's: how long etcd took to commit each batch of its log.
  metrics::HistogramSnapshot commit_latency;
};

struct HaOptions {
  std::string etcd;     // "http://H1:2379,http://H2:2379"; empty: a single master
  std::string cluster;  // the cluster's name (etcd/cluster_keys.h)
  int64_t leader_ttl_ms = 2000;
  // Snapshots (ha_snapshots.h): the data dir and what to keep; the leader
  // client's address is filled in by Join (the cluster's etcd:// address).
  HaSnapshotOptions snapshots;
  // Log batches whose transactions may be under way at once (EtcdLogOptions).
  int log_in_flight = durability::EtcdLogOptions().max_in_flight;
  bool enabled() const { return !etcd.empty(); }
};

class HaMember {
 public:
  // A member applying the cluster's log to `engine` (fresh, in its restore
  // state, outliving this member) once AwaitLeadership() runs. Checks the
  // options; reaches no one yet.
  static StatusOr<std::unique_ptr<HaMember>> Join(const HaOptions& options,
                                                  master::MasterService& engine);
  ~HaMember();  // resigns, if it leads

  // Follows the cluster's log (trying again while etcd is out of reach),
  // campaigns, and returns once this master leads, with the log applied to
  // its end and opened for writing (the log to attach); kClosed once
  // Cancel()ed; the tail's error if it cannot follow the log (trimmed past
  // its start, kObjectNotFound: this master cannot catch up from etcd alone;
  // damaged, kCorruptData).
  StatusOr<std::unique_ptr<durability::EtcdOperationLog>> AwaitLeadership();
  void Cancel();
  // Makes the leader's endpoints known (the leader key's value).
  Status Publish(const etcd::LeaderInfo& info);
  // Whether this master surely still leads (Leadership::Held); false before.
  bool Held() const;
  // The log position applied up to, and the records applied.
  uint64_t applied_position() const;
  uint64_t applied_records() const;
  const HaOptions& options() const { return options_; }

  // Makes this master known to the others under its own lease, refreshed
  // with what it applied (and the others read back) every `period`, until
  // destruction. `self.master_id` names it.
  void StartMembership(etcd::MemberInfo self,
                       std::chrono::milliseconds period = std::chrono::milliseconds(500));
  // Once it leads: the log whose appended records count as applied.
  void SetLeaderLog(durability::EtcdOperationLog* log) {
    leader_log_.store(log, std::memory_order_release);
  }
  // What Prepare did at the start (HaSnapshots::Start::note); empty: nothing.
  const std::string& start_note() const { return start_note_; }
  // The log position the leader last trimmed before (0: never).
  uint64_t trimmed_before() const { return trimmed_.load(std::memory_order_acquire); }
  ClusterView View() const;

 private:
  HaMember(HaOptions options, master::MasterService& engine)
      : options_(std::move(options)), engine_(engine) {}
  Status StartTail(uint64_t from);
  // The leader's: trims the log before what every member holds (the newest
  // snapshot of each that keeps them, and what each applied), then compacts
  // etcd's history there. Under no lock.
  void TrimLog();
  void Membership(etcd::MemberInfo self, std::chrono::milliseconds period);
  // Writes this member's record under its lease (granted anew when lost),
  // and reads every member's and the leader key back.
  void RefreshMembership(etcd::MemberInfo& self, int64_t* lease);
  // How far a member got in the log.
  struct Progress {
    uint64_t position = 0;
    uint64_t records = 0;
  };
  Progress OwnProgress() const;
  // The leader's: `own` when this master leads, else what its last record
  // says (0: unknown). Under view_mu_.
  Progress LeaderProgressLocked(const std::string& leader_id, bool leads, Progress own) const;
  static uint64_t LagRecords(Progress leader, const etcd::MemberInfo& m);
  void UpdateViewLocked(std::vector<etcd::MemberInfo> read, std::string leader_id);
  Status Apply(uint64_t position, std::string_view bytes);

  const HaOptions options_;
  master::MasterService& engine_;
  std::shared_ptr<etcd::EtcdClient> etcd_;
  std::unique_ptr<durability::EtcdLogTail> tail_;
  std::atomic<const durability::EtcdLogTail*> tail_ready_{nullptr};  // tail_, for other threads
  std::shared_ptr<etcd::Leadership> leadership_;
  master::LogRecord record_;  // the record being applied (the tail's thread, then the caller's)
  std::atomic<uint64_t> applied_{0};  // once it leads (the tail's position before)
  std::atomic<bool> leads_{false};
  std::atomic<uint64_t> records_{0};
  std::atomic<bool> cancelled_{false};
  std::atomic<durability::EtcdOperationLog*> leader_log_{nullptr};
  std::unique_ptr<HaSnapshots> snapshots_;
  std::string start_note_;
  bool prepared_ = false;             // Prepare ran (AwaitLeadership's thread)
  uint64_t start_from_ = 0;           // where Prepare left the engine
  std::atomic<uint64_t> trimmed_{0};  // the membership thread's
  uint64_t promoted_records_ = 0;  // applied when it began to lead (before leads_)

  mutable std::mutex view_mu_;  // guards the five below
  std::vector<etcd::MemberInfo> members_;
  std::string leader_id_;
  std::map<std::string, std::chrono::steady_clock::time_point> behind_since_;
  uint64_t leader_changes_ = 0;
  std::string self_id_;
  std::condition_variable stop_cv_;
  bool stop_membership_ = false;
  std::thread membership_;
};

}  // namespace crescent::server
