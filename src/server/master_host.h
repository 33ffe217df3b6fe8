// MasterHost: a running master as a process holds it — the engine with its
// background maintenance thread, the gRPC server in front, and the admin HTTP
// endpoint. Shared by `crescent master` and `crescent serve`. Destruction
// stops the parts: HTTP; clients refused; the engine's waits for nodes ended
// (MasterService::BeginShutdown), so that no step below waits for a stopped
// node; maintenance; gRPC (in-flight calls finish); then the shutdown
// snapshot. Also the master half of LocalCluster (tests, benchmarks).
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "durability/data_dir_lock.h"
#include "durability/file_log.h"
#include "durability/snapshotter.h"
#include "master/master_config.h"
#include "master/master_service.h"
#include "metrics/admin_http.h"
#include "metrics/registry.h"
#include "rpc/master_server.h"
#include "server/deferred_log.h"
#include "server/ha_member.h"
#include "server/status_report.h"
#include "server/tier_copier.h"
#include "transfer/capability.h"

namespace crescent::server {

struct MasterHostOptions {
  master::MasterConfig config;
  rpc::MasterServerOptions rpc;  // rpc.listen_address is host:port (port 0: any)
  std::string http_host = "127.0.0.1";
  int http_port = 9003;  // 0: no admin HTTP
  // The operation log's directory (durability/file_log.h); empty: no log.
  std::string data_dir;
  // 0: fdatasync before each acknowledgement ("always"); else the period of
  // the log's group commit in ms.
  int64_t log_sync_ms = 10;
  // With a data dir: a snapshot every this many ms (0: none but the final one
  // at shutdown and those asked for), keeping the newest `snapshot_keep`.
  int64_t snapshot_interval_ms = 300'000;
  size_t snapshot_keep = 2;
  // With a data dir: start empty when nothing restorable is there (else the
  // start fails), and how long restored segments wait for their nodes.
  bool allow_empty_restore = false;
  int64_t restore_grace_ms = 10'000;
  // A master of a cluster on etcd (docs/ha.md): Start() is a standby until
  // this master leads; no data dir then (the log is in etcd).
  HaOptions ha;
  // Called (from Start's thread) once the standby follows the cluster's log,
  // with the member: HaMember::Cancel() ends the wait for the leadership.
  std::function<void(HaMember&)> on_standby;
  // Called once (from a thread of the host's) when the leader lost its
  // leadership: the host answers clients UNAVAILABLE from then on; the
  // process should end or start anew as a standby.
  std::function<void()> on_deposed;
};

// A cluster's view in the Stats RPC's section and in /metrics
// (master_host_ha.cc).
void FillClusterStatus(const ClusterView& v, proto::ClusterStatus* out);
void CollectClusterMetrics(const ClusterView& v, metrics::TextWriter& w);

class MasterHost {
 public:
  static StatusOr<std::unique_ptr<MasterHost>> Start(const MasterHostOptions& options,
                                                     const std::string& secret);
  master::MasterService& master() { return *master_; }
  ~MasterHost();

  // "host:port" clients use to reach the gRPC server.
  std::string address() const;
  // Human-readable lines saying where everything listens.
  std::string Describe() const;
  // Clients' calls are answered UNAVAILABLE from now on (rpc::MasterServer::
  // BeginDrain); the first step of a shutdown. The destructor drains too.
  void BeginDrain(std::string why = rpc::kShuttingDown);
  // Replaces the credentials clients authenticate with (rpc::MasterServer::
  // SetCredentials): a reloaded auth file; the engine takes its tenants'
  // quotas (MasterService::SetTenantQuotas).
  void SetCredentials(std::shared_ptr<const auth::ServerCredentials> credentials);
  // Null without a data dir.
  durability::Snapshotter* snapshotter() { return snapshotter_.get(); }
  // What /metrics renders: the engine's samples and the gRPC server's; a
  // process that runs more (serve: a store node) adds its own collector, and
  // removes it before that part goes.
  metrics::MetricsRegistry& metrics_registry() { return registry_; }

 private:
  explicit MasterHost(transfer::CapabilitySigner signer) : signer_(std::move(signer)) {}
  // A cluster's master (master_host_ha.cc): the engine built on deferred_,
  // following the cluster's log until it leads; then the log attached and
  // the restore finished.
  Status LeadCluster(const MasterHostOptions& options);
  // Once serving: the leader's endpoints published, and the watch on the
  // leadership started.
  Status PublishLeader();
  void StopWatchdog();
  MasterHostOptions options_;
  std::string address_;
  transfer::CapabilitySigner signer_;
  std::vector<std::string> warnings_;  // from opening the data dir; shown by Describe()
  std::string restored_;               // what the restore brought back; shown by Describe()
  // Declared before master_, so that they outlive it; the data dir's lock
  // first, so that it is released last.
  std::optional<durability::DataDirLock> dir_lock_;
  std::unique_ptr<durability::FileOperationLog> log_;
  std::unique_ptr<DeferredLog> deferred_;  // a cluster's master: the log in etcd, once it leads
  std::unique_ptr<TierCopier> copier_;  // the engine's tier moves
  std::unique_ptr<master::MasterService> master_;
  std::unique_ptr<HaMember> ha_;  // after master_: its tail applies to the engine
  std::string master_id_;         // a cluster's master: its random id
  // Watches the leadership; stopped first.
  std::thread watchdog_;
  std::atomic<bool> watchdog_stop_{false};
  std::unique_ptr<durability::Snapshotter> snapshotter_;
  std::unique_ptr<rpc::MasterServer> rpc_;
  metrics::MetricsRegistry registry_;     // before http_: the endpoint renders it
  std::unique_ptr<StatusReport> status_;  // /api/status; null without HTTP
  // Samples status_ once a second for its history; stopped first.
  std::thread sampler_;
  std::mutex sampler_mu_;  // guards sampler_stop_
  std::condition_variable sampler_cv_;
  bool sampler_stop_ = false;
  std::unique_ptr<metrics::AdminHttpServer> http_;
};

}  // namespace crescent::server
