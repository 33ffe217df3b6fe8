// MasterHost's part as a master of a cluster on etcd (docs/ha.md): standby,
// promotion, the published endpoints, and the watch on the leadership.
#include <chrono>
#include <iostream>
#include <random>

#include "common/clock.h"
#include "common/endpoint.h"
#include "server/master_host.h"

#include "rpc/messages.pb.h"

namespace crescent::server {
namespace {

std::string RandomId() {
  std::random_device rd;
  const uint64_t id = (static_cast<uint64_t>(rd()) << 32) | rd();
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(id));
  return hex;
}

}  // namespace

Status MasterHost::LeadCluster(const MasterHostOptions& options) {
  master_id_ = RandomId();
  deferred_ = std::make_unique<DeferredLog>();
  auto engine =
      master::MasterService::Create(options.config, SteadyClock::Instance(), deferred_.get());
  if (!engine.ok()) return engine.status();
  master_ = std::move(engine).value();
  auto member = HaMember::Join(options.ha, *master_);
  if (!member.ok()) return member.status();
  ha_ = std::move(member).value();
  ha_->StartMembership(etcd::MemberInfo{.master_id = master_id_,
                                        .grpc = options.rpc.listen_address});
  if (options.on_standby) options.on_standby(*ha_);
  auto log = ha_->AwaitLeadership();
  if (!log.ok()) return log.status();
  ha_->SetLeaderLog(log->get());
  deferred_->Attach(std::move(log).value());
  // The segments the log names wait for their nodes, which find this master
  // through the leader key once it is published, and take them over with
  // their objects (the take-over of a restore).
  const master::MasterService::RestoreSummary summary =
      master_->FinishRestore(options.restore_grace_ms);
  restored_ = "leader of cluster " + options.ha.cluster + " (etcd " + options.ha.etcd +
              "), master id " + master_id_ + ": " +
              (ha_->start_note().empty() ? std::string() : ha_->start_note() + ", then ") +
              "applied " + std::to_string(ha_->applied_records()) + " records of its log; " +
              std::to_string(summary.objects) + " objects on " + std::to_string(summary.segments) +
              " segments wait for their nodes";
  return Status::Ok();
}

Status MasterHost::PublishLeader() {
  etcd::LeaderInfo info;
  info.master_id = master_id_;
  info.grpc = address_;
  if (http_) info.http = HostPort(options_.http_host, static_cast<uint16_t>(http_->port()));
  if (Status s = ha_->Publish(info); !s.ok()) return s;
  watchdog_ = std::thread([this] {
    while (!watchdog_stop_.load(std::memory_order_acquire)) {
      if (!ha_->Held()) {
        // Every write of this master's is a transaction guarded by the leader
        // key, so it acknowledges nothing more anyway; refusing clients at
        // once sends them to the next leader sooner.
        BeginDrain("this master no longer leads cluster " + options_.ha.cluster +
                   ": ask its new leader (docs/ha.md)");
        if (options_.on_deposed) options_.on_deposed();
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  return Status::Ok();
}

void MasterHost::StopWatchdog() {
  watchdog_stop_.store(true, std::memory_order_release);
  if (watchdog_.joinable() && watchdog_.get_id() != std::this_thread::get_id()) watchdog_.join();
}

void FillClusterStatus(const ClusterView& v, proto::ClusterStatus* out) {
  out->set_name(v.cluster);
  out->set_etcd(v.etcd);
  out->set_self_id(v.self_id);
  out->set_leader_id(v.leader_id);
  out->set_leader_changes(v.leader_changes);
  for (const ClusterMemberView& m : v.members) {
    proto::ClusterMember* pm = out->add_members();
    pm->set_master_id(m.info.master_id);
    pm->set_grpc(m.info.grpc);
    pm->set_leader(m.leader);
    pm->set_applied_records(m.info.applied_records);
    pm->set_lag_records(m.lag_records);
    pm->set_lag_seconds(m.lag_seconds);
  }
}

void CollectClusterMetrics(const ClusterView& v, metrics::TextWriter& w) {
  w.Family("crescent_ha_leader", "gauge", "1 while this master leads its cluster, else 0");
  w.Sample({}, uint64_t{v.leads ? 1u : 0u});
  w.Family("crescent_ha_leader_changes_total", "counter",
           "Changes of the cluster's leader this master saw (docs/ha.md)");
  w.Sample({}, v.leader_changes);
  w.Family("crescent_ha_log_lag_records", "gauge",
           "Records of the leader's log a master had not applied at its last report");
  for (const ClusterMemberView& m : v.members) {
    w.Sample({{"master", m.info.master_id}}, m.lag_records);
  }
  if (v.leads) {
    w.Family("crescent_etcd_commit_seconds", "histogram",
             "How long etcd took to commit each batch of the leader's log (one guarded "
             "transaction)");
    w.Histogram({}, v.commit_latency, 1e9);
  }
  w.Family("crescent_ha_log_lag_seconds", "gauge",
           "How long a master has been behind the leader's log (0: caught up)");
  for (const ClusterMemberView& m : v.members) {
    w.Sample({{"master", m.info.master_id}}, m.lag_seconds);
  }
}

}  // namespace crescent::server
