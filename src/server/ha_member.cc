#include "server/ha_member.h"

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
  auto etcd = etcd::EtcdClient::Create(etcd::EtcdOptions{.endpoints = std::move(*endpoints)});
  if (!etcd.ok()) return etcd.status();
  std::unique_ptr<HaMember> m(new HaMember(options, engine));
  m->etcd_ = std::move(etcd).value();
  return m;
}

Status HaMember::StartTail() {
  durability::EtcdLogTailOptions tail;
  tail.etcd = etcd_;
  tail.cluster = options_.cluster;
  tail.fn = [this](uint64_t position, std::string_view bytes) { return Apply(position, bytes); };
  auto started = durability::EtcdLogTail::Start(std::move(tail));
  if (!started.ok()) return started.status();
  tail_ = std::move(started).value();
  tail_ready_.store(tail_.get(), std::memory_order_release);
  return Status::Ok();
}

HaMember::~HaMember() {
  if (tail_) tail_->Stop();
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
    if (!tail_) {
      Status s = StartTail();
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
  auto opened = durability::EtcdOperationLog::Open(std::move(log));
  if (!opened.ok()) return opened.status();
  if ((*opened)->end_position() != end) {
    return Status(ErrorCode::kInternal, "the cluster's log ends at " +
                                            std::to_string((*opened)->end_position()) +
                                            " but was applied to " + std::to_string(end));
  }
  applied_.store(end, std::memory_order_release);
  leads_.store(true, std::memory_order_release);
  return opened;
}

uint64_t HaMember::applied_position() const {
  if (leads_.load(std::memory_order_acquire)) return applied_.load(std::memory_order_acquire);
  const durability::EtcdLogTail* tail = tail_ready_.load(std::memory_order_acquire);
  return tail ? tail->position() : 0;
}

void HaMember::Cancel() { cancelled_.store(true, std::memory_order_release); }

Status HaMember::Publish(const etcd::LeaderInfo& info) {
  if (!leadership_) return Status(ErrorCode::kUnavailable, "not the leader");
  return leadership_->Publish(etcd::EncodeLeaderInfo(info));
}

bool HaMember::Held() const { return leadership_ && leadership_->Held(); }

}  // namespace crescent::server
