#include "server/ha_member.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "master/log_record.h"

namespace crescent::server {

StatusOr<std::unique_ptr<HaMember>> HaMember::Join(const HaOptions& options,
                                                   master::MasterService& engine) {
  if (Status s = etcd::CheckClusterName(options.cluster); !s.ok()) return s;
  if (options.leader_ttl_ms < 1000) {
    return Status(ErrorCode::kInvalidArgument, "--leader-ttl-ms must be at least 1000");
  }
  StatusOr<std::vector<std::string>> endpoints = etcd::ParseEndpoints(options.etcd);
  if (!endpoints.ok()) return endpoints.status();
  // The leader, for its snapshots: through the cluster's etcd:// address.
  HaSnapshotOptions so = options.snapshots;
  so.leader.address = "etcd://";
  for (size_t i = 0; i < endpoints->size(); ++i) {
    so.leader.address += (i ? "," : "") + (*endpoints)[i];
  }
  so.leader.address += "/" + options.cluster;
  // A copy tried again at the next interval (a bootstrap: every second), so
  // a call gives up soon rather than holding a stopping member.
  so.leader.attempts = std::min(so.leader.attempts, 2);
  auto etcd = etcd::EtcdClient::Create(etcd::EtcdOptions{.endpoints = std::move(*endpoints)});
  if (!etcd.ok()) return etcd.status();
  std::unique_ptr<HaMember> m(new HaMember(options, engine));
  m->etcd_ = std::move(etcd).value();
  m->snapshots_ = std::make_unique<HaSnapshots>(std::move(so), m->etcd_, options.cluster);
  return m;
}

Status HaMember::StartTail(uint64_t from) {
  durability::EtcdLogTailOptions tail;
  tail.etcd = etcd_;
  tail.cluster = options_.cluster;
  tail.from = from;
  tail.fn = [this](uint64_t position, std::string_view bytes) { return Apply(position, bytes); };
  auto started = durability::EtcdLogTail::Start(std::move(tail));
  if (!started.ok()) return started.status();
  tail_ = std::move(started).value();
  tail_ready_.store(tail_.get(), std::memory_order_release);
  return Status::Ok();
}

HaMember::~HaMember() {
  {
    std::lock_guard lock(view_mu_);
    stop_membership_ = true;
  }
  stop_cv_.notify_all();
  if (membership_.joinable()) membership_.join();
  if (tail_) tail_->Stop();
  if (snapshots_) snapshots_->StopCopies();
  if (leadership_) leadership_->Resign();
}

Status HaMember::Apply(uint64_t position, std::string_view bytes) {
  if (Status s = master::DecodeLogRecordInto(bytes, &record_); !s.ok()) {
    return Status(ErrorCode::kCorruptData,
                  "the cluster's log at position " + std::to_string(position) + ": " + s.message());
  }
  engine_.ApplyRestored(record_);
  records_.fetch_add(1, std::memory_order_acq_rel);
  return Status::Ok();
}

StatusOr<std::unique_ptr<durability::EtcdOperationLog>> HaMember::AwaitLeadership() {
  etcd::LeadershipOptions lo;
  lo.key = etcd::LeaderKey(options_.cluster);
  lo.ttl = std::chrono::milliseconds(options_.leader_ttl_ms);
  while (!leadership_) {
    if (cancelled_.load(std::memory_order_acquire)) {
      return Status(ErrorCode::kClosed, "stopped while a standby");
    }
    // Follows the log first (an etcd out of reach: again and again, until
    // it answers), then campaigns.
    if (!prepared_) {
      // Where to follow from: this master's snapshot, or its leader's when
      // the log was trimmed past it (a bootstrap).
      StatusOr<HaSnapshots::Start> start = snapshots_->Prepare(engine_, cancelled_);
      if (!start.ok()) {
        // etcd out of reach: again; anything else ends the start.
        const ErrorCode code = start.status().code();
        if (code != ErrorCode::kUnavailable && code != ErrorCode::kTimeout) return start.status();
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        continue;
      }
      start_from_ = start->position;
      start_note_ = start->note;
      prepared_ = true;
      snapshots_->StartCopies();
    }
    if (!tail_) {
      Status s = StartTail(start_from_);
      if (s.code() == ErrorCode::kObjectNotFound || s.code() == ErrorCode::kCorruptData) return s;
      if (!s.ok()) std::this_thread::sleep_for(std::chrono::milliseconds(200));
      continue;
    }
    if (Status s = tail_->status(); !s.ok()) return s;
    // Campaigns a second at a time, to see Cancel() and a failed tail.
    auto won = etcd::Leadership::Campaign(etcd_, lo, etcd::Clock::now() + std::chrono::seconds(1));
    if (won.ok()) leadership_ = std::move(won).value();
  }
  // Nothing but this leadership may write the log from here on: what the old
  // leader committed after the tail's last record is all there is to apply.
  snapshots_->StopCopies(/*wait=*/false);
  tail_->Stop();
  if (Status s = tail_->status(); !s.ok()) return s;
  uint64_t end = tail_->position();
  Status drained = durability::ReadEtcdLog(
      *etcd_, options_.cluster, tail_->position(), 16,
      [this](uint64_t position, std::string_view bytes) { return Apply(position, bytes); }, &end,
      nullptr);
  if (!drained.ok()) return drained;
  durability::EtcdLogOptions log;
  log.etcd = etcd_;
  log.leadership = leadership_;
  log.cluster = options_.cluster;
  log.start_position = end;  // where an empty log (none written yet) starts
  log.max_in_flight = options_.log_in_flight;
  auto opened = durability::EtcdOperationLog::Open(std::move(log));
  if (!opened.ok()) return opened.status();
  if ((*opened)->end_position() != end) {
    return Status(ErrorCode::kInternal, "the cluster's log ends at " +
                                            std::to_string((*opened)->end_position()) +
                                            " but was applied to " + std::to_string(end));
  }
  applied_.store(end, std::memory_order_release);
  promoted_records_ = records_.load(std::memory_order_acquire);
  leads_.store(true, std::memory_order_release);
  return opened;
}

uint64_t HaMember::applied_records() const {
  if (leads_.load(std::memory_order_acquire)) {
    const durability::EtcdOperationLog* log = leader_log_.load(std::memory_order_acquire);
    return promoted_records_ + (log ? log->Stats().records : 0);
  }
  return records_.load(std::memory_order_acquire);
}

uint64_t HaMember::applied_position() const {
  if (leads_.load(std::memory_order_acquire)) {
    const durability::EtcdOperationLog* log = leader_log_.load(std::memory_order_acquire);
    return log ? log->end_position() : applied_.load(std::memory_order_acquire);
  }
  const durability::EtcdLogTail* tail = tail_ready_.load(std::memory_order_acquire);
  return tail ? tail->position() : 0;
}

void HaMember::Cancel() { cancelled_.store(true, std::memory_order_release); }

Status HaMember::Publish(const etcd::LeaderInfo& info) {
  if (!leadership_) return Status(ErrorCode::kUnavailable, "not the leader");
  return leadership_->Publish(etcd::EncodeLeaderInfo(info));
}

bool HaMember::Held() const { return leadership_ && leadership_->Held(); }

// ---- Membership ----

void HaMember::StartMembership(etcd::MemberInfo self, std::chrono::milliseconds period) {
  {
    std::lock_guard lock(view_mu_);
    self_id_ = self.master_id;
  }
  membership_ = std::thread(
      [this, self = std::move(self), period]() mutable { Membership(std::move(self), period); });
}

void HaMember::Membership(etcd::MemberInfo self, std::chrono::milliseconds period) {
  int64_t lease = 0;
  std::unique_lock lock(view_mu_);
  while (!stop_membership_) {
    lock.unlock();
    RefreshMembership(self, &lease);
    lock.lock();
    stop_cv_.wait_for(lock, period, [this] { return stop_membership_; });
  }
  lock.unlock();
  if (lease != 0) (void)etcd_->LeaseRevoke(lease);  // its record goes at once
}

void HaMember::RefreshMembership(etcd::MemberInfo& self, int64_t* lease) {
  self.applied_position = applied_position();
  self.applied_records = applied_records();
  self.keeps_snapshots = snapshots_->keeps();
  self.snapshot_position = snapshots_->newest();
  if (*lease != 0 && !etcd_->KeepAliveOnce(*lease).ok()) *lease = 0;
  if (*lease == 0) {
    const int64_t ttl = std::max<int64_t>(2, (options_.leader_ttl_ms + 999) / 1000);
    auto granted = etcd_->LeaseGrant(ttl);
    if (!granted.ok()) return;
    *lease = granted->id();
  }
  etcdserverpb::PutRequest put;
  put.set_key(etcd::MemberKey(options_.cluster, self.master_id));
  put.set_value(etcd::EncodeMemberInfo(self));
  put.set_lease(*lease);
  if (!etcd_->Put(put).ok()) return;
  etcdserverpb::RangeRequest range;
  const std::string prefix = etcd::MembersPrefix(options_.cluster);
  range.set_key(prefix);
  range.set_range_end(etcd::PrefixEnd(prefix));
  auto members = etcd_->Range(range);
  etcdserverpb::RangeRequest leader;
  leader.set_key(etcd::LeaderKey(options_.cluster));
  auto leader_kv = etcd_->Range(leader);
  if (!members.ok() || !leader_kv.ok()) return;
  std::vector<etcd::MemberInfo> read;
  for (const auto& kv : members->kvs()) {
    if (auto m = etcd::DecodeMemberInfo(kv.value()); m.ok()) read.push_back(std::move(*m));
  }
  std::string leader_id;
  if (leader_kv->kvs_size() == 1) {
    if (auto info = etcd::DecodeLeaderInfo(leader_kv->kvs(0).value()); info.ok()) {
      leader_id = info->master_id;
    }
  }
  {
    std::lock_guard lock(view_mu_);
    UpdateViewLocked(std::move(read), std::move(leader_id));
  }
  if (leads_.load(std::memory_order_acquire)) TrimLog();
}

void HaMember::TrimLog() {
  durability::EtcdOperationLog* log = leader_log_.load(std::memory_order_acquire);
  if (log == nullptr || !snapshots_->keeps()) return;
  // What every member holds: the leader's newest snapshot, and each other
  // member's applied position and, where it keeps snapshots, its newest.
  uint64_t bound = snapshots_->newest();
  {
    std::lock_guard lock(view_mu_);
    for (const etcd::MemberInfo& m : members_) {
      if (m.master_id == self_id_) continue;
      bound = std::min(bound, m.applied_position);
      if (m.keeps_snapshots) bound = std::min(bound, m.snapshot_position);
    }
  }
  if (bound <= trimmed_.load(std::memory_order_acquire)) return;
  if (Status s = log->TruncateBefore(bound); !s.ok()) return;  // tried again next period
  trimmed_.store(bound, std::memory_order_release);
  // Deleted keys leave etcd's history only once it is compacted: at the
  // revision now, which no member that follows the log needs any more (a
  // watch from before it ranges again from its position).
  etcdserverpb::RangeRequest r;
  r.set_key(etcd::LeaderKey(options_.cluster));
  r.set_count_only(true);
  if (auto now = etcd_->Range(r); now.ok()) (void)etcd_->Compact(now->header().revision(), false);
}

void HaMember::UpdateViewLocked(std::vector<etcd::MemberInfo> read, std::string leader_id) {
  members_ = std::move(read);
  if (!leader_id.empty() && !leader_id_.empty() && leader_id != leader_id_) ++leader_changes_;
  if (!leader_id.empty()) leader_id_ = std::move(leader_id);
  // Who is behind, since when (View's lag_seconds).
  const auto now = std::chrono::steady_clock::now();
  const bool leads = leads_.load(std::memory_order_acquire);
  const Progress leader =
      LeaderProgressLocked(leader_id_, leads, leads ? OwnProgress() : Progress{});
  std::map<std::string, std::chrono::steady_clock::time_point> behind;
  for (const etcd::MemberInfo& m : members_) {
    if (m.applied_position >= leader.position) continue;
    auto was = behind_since_.find(m.master_id);
    behind[m.master_id] = was == behind_since_.end() ? now : was->second;
  }
  behind_since_ = std::move(behind);
}

HaMember::Progress HaMember::OwnProgress() const {
  return Progress{applied_position(), applied_records()};
}

HaMember::Progress HaMember::LeaderProgressLocked(const std::string& leader_id, bool leads,
                                                  Progress own) const {
  if (leads) return own;
  for (const etcd::MemberInfo& m : members_) {
    if (m.master_id == leader_id) return Progress{m.applied_position, m.applied_records};
  }
  return Progress{};
}

uint64_t HaMember::LagRecords(Progress leader, const etcd::MemberInfo& m) {
  // Behind by position; by records as far as they tell (a member that
  // started from a snapshot counts only the records applied since).
  if (m.applied_position >= leader.position) return 0;
  return leader.records > m.applied_records ? leader.records - m.applied_records : 1;
}

ClusterView HaMember::View() const {
  ClusterView v;
  v.cluster = options_.cluster;
  v.etcd = options_.etcd;
  v.leads = leads_.load(std::memory_order_acquire);
  if (const auto* log = leader_log_.load(std::memory_order_acquire); log && v.leads) {
    v.commit_latency = log->CommitLatency();
  }
  const Progress own = OwnProgress();
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard lock(view_mu_);
  v.self_id = self_id_;
  v.leader_id = v.leads ? self_id_ : leader_id_;  // the record read back may be older
  v.leader_changes = leader_changes_;
  const Progress leader = LeaderProgressLocked(v.leader_id, v.leads, own);
  for (const etcd::MemberInfo& m : members_) {
    ClusterMemberView mv;
    mv.info = m;
    if (m.master_id == self_id_) {
      mv.info.applied_records = own.records;
      mv.info.applied_position = own.position;
    }
    mv.leader = m.master_id == v.leader_id;
    mv.lag_records = LagRecords(leader, mv.info);
    if (auto since = behind_since_.find(m.master_id);
        since != behind_since_.end() && mv.lag_records > 0) {
      mv.lag_seconds = std::chrono::duration<double>(now - since->second).count();
    }
    v.members.push_back(std::move(mv));
  }
  return v;
}

}  // namespace crescent::server
