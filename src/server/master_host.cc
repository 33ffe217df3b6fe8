#include "server/master_host.h"

#include <iostream>

#include "common/clock.h"
#include "common/endpoint.h"
#include "durability/restore.h"
#include "master/master_metrics.h"
#include "rpc/server_metrics.h"
#include "server/status_page.h"

namespace crescent::server {

StatusOr<std::unique_ptr<MasterHost>> MasterHost::Start(const MasterHostOptions& options,
                                                        const std::string& secret) {
  StatusOr<transfer::CapabilitySigner> signer = transfer::CapabilitySigner::Create(secret);
  if (!signer.ok()) return signer.status();
  std::unique_ptr<MasterHost> host(new MasterHost(std::move(signer.value())));
  host->options_ = options;
  auto make = [&] {
    return master::MasterService::Create(options.config, SteadyClock::Instance(), host->log_.get());
  };
  bool started_empty = false;
  if (!options.data_dir.empty()) {
    auto lock = durability::DataDirLock::Acquire(options.data_dir);
    if (!lock.ok()) return lock.status();
    host->dir_lock_.emplace(std::move(lock).value());
  }
  if (options.ha.enabled()) {
    // The log is in etcd; the data dir holds snapshots only (docs/ha.md).
    MasterHostOptions cluster = options;
    cluster.ha.snapshots.data_dir = options.data_dir;
    cluster.ha.snapshots.keep = options.snapshot_keep;
    if (cluster.ha.snapshots.copy_interval_ms == 300'000) {
      cluster.ha.snapshots.copy_interval_ms = options.snapshot_interval_ms;
    }
    if (Status s = host->LeadCluster(cluster); !s.ok()) return s;
  } else if (!options.data_dir.empty()) {
    durability::FileLogOptions lo;
    lo.dir = options.data_dir;
    lo.sync_interval_ms = options.log_sync_ms;
    lo.start_position = durability::LogStartForDir(options.data_dir);
    auto log = durability::FileOperationLog::Open(lo, &host->warnings_);
    if (!log.ok()) return log.status();
    host->log_ = std::move(log.value());
    durability::RestoreOptions ro{options.data_dir, options.allow_empty_restore,
                                  options.restore_grace_ms};
    auto restored = durability::RestoreMaster(ro, *host->log_, make);
    if (!restored.ok()) return restored.status();
    for (std::string& w : restored->warnings) host->warnings_.push_back(std::move(w));
    host->restored_ = durability::DescribeRestore(*restored);
    started_empty = restored->started_empty;
    host->master_ = std::move(restored->master);
  } else {
    auto master = make();
    if (!master.ok()) return master.status();
    host->master_ = std::move(master.value());
  }
  // Tenants' quotas, from the auth file (SetCredentials: its reloads).
  if (options.rpc.credentials) {
    host->master_->SetTenantQuotas(options.rpc.credentials->file().tenant_quotas);
  }
  host->copier_ = std::make_unique<TierCopier>(host->signer_);
  host->master_->SetReplicaCopier(host->copier_.get());
  host->master_->StartBackground();
  if (host->log_ || (host->ha_ && !options.data_dir.empty())) {
    // A cluster's leader syncs each snapshot's position in etcd's log, but
    // leaves its trimming to the cluster's rule (HaMember).
    master::OperationLog* log =
        host->log_ ? static_cast<master::OperationLog*>(host->log_.get()) : host->deferred_.get();
    host->snapshotter_ = std::make_unique<durability::Snapshotter>(
        *host->master_, log,
        durability::SnapshotterOptions{options.data_dir, options.snapshot_keep,
                                       /*truncate_log=*/host->log_ != nullptr});
    // A start that gave up on damaged files writes a snapshot at once, so
    // that the next start begins from it rather than from those files.
    if (started_empty) {
      if (auto info = host->snapshotter_->TakeNow(); !info.ok()) return info.status();
    }
    host->snapshotter_->Start(options.snapshot_interval_ms);
  }

  rpc::MasterServerOptions rpc_options = options.rpc;
  // A cluster's leader acknowledges a change once etcd committed it.
  rpc_options.acks_wait_for_sync = (host->log_ && options.log_sync_ms == 0) || host->ha_;
  if (host->snapshotter_) {
    rpc_options.request_snapshot = [s = host->snapshotter_.get()] { s->Request(); };
    rpc_options.read_snapshot = [s = host->snapshotter_.get()](
                                    uint64_t position, uint64_t offset,
                                    uint32_t max) -> StatusOr<rpc::SnapshotPart> {
      rpc::SnapshotPart part;
      Status read =
          s->ReadPart(position, offset, max, &part.position, &part.file_bytes, &part.data);
      if (!read.ok()) return read;
      return part;
    };
  }
  if (host->ha_) {
    rpc_options.cluster_status = [h = host->ha_.get()](proto::ClusterStatus* out) {
      FillClusterStatus(h->View(), out);
    };
  }
  auto rpc = rpc::MasterServer::Start(rpc_options, *host->master_, host->signer_);
  if (!rpc.ok()) return rpc.status();
  host->rpc_ = std::move(rpc.value());
  const std::string& listen = options.rpc.listen_address;
  host->address_ = listen.substr(0, listen.rfind(':')) + ":" + std::to_string(host->rpc_->port());

  host->registry_.Add([m = host->master_.get()](metrics::TextWriter& w) {
    w.Raw(master::RenderPrometheus(*m));
    master::CollectMasterGauges(*m, w);
  });
  host->registry_.Add([r = host->rpc_.get()](metrics::TextWriter& w) { r->metrics().Collect(w); });
  if (host->ha_) {
    host->registry_.Add(
        [h = host->ha_.get()](metrics::TextWriter& w) { CollectClusterMetrics(h->View(), w); });
  }
  if (options.http_port != 0) {
    host->status_ =
        std::make_unique<StatusReport>(*host->master_, host->rpc_->metrics(), host->address_);
    if (host->ha_) host->status_->SetCluster([h = host->ha_.get()] { return h->View(); });
    host->status_->Sample(UnixNowMs());
    host->sampler_ = std::thread([h = host.get()] {
      std::unique_lock lock(h->sampler_mu_);
      while (!h->sampler_cv_.wait_for(lock, std::chrono::seconds(1),
                                      [h] { return h->sampler_stop_; })) {
        h->status_->Sample(UnixNowMs());
      }
    });
    metrics::AdminRoutes routes = master::MasterRoutes(*host->master_);
    routes.metrics = [r = &host->registry_] { return r->Render(); };
    routes.status_json = [s = host->status_.get()] { return s->Json(UnixNowMs()); };
    routes.status_page = std::string(kStatusPageHtml);
    auto http =
        metrics::AdminHttpServer::Start(options.http_host, options.http_port, std::move(routes));
    if (!http.ok()) return http.status();
    host->http_ = std::move(http.value());
    host->rpc_->SetAdminPort(host->http_->port());  // `crescent top` finds it through Stats
  }
  if (host->ha_) {
    if (Status s = host->PublishLeader(); !s.ok()) return s;
  }
  return host;
}

std::string MasterHost::address() const { return address_; }

std::string MasterHost::Describe() const {
  std::string out;
  for (const std::string& w : warnings_) out += "warning: " + w + "\n";
  out += "master (gRPC) listening on " + address();
  if (!options_.rpc.unix_socket.empty()) out += " and unix:" + options_.rpc.unix_socket;
  out += ", eviction policy " + options_.config.eviction_policy + "\n";
  if (const int lean = rpc_->control_port(); lean != 0) {
    const std::string& listen = options_.rpc.listen_address;
    out += "lean control protocol on " + listen.substr(0, listen.rfind(':')) + ":" +
           std::to_string(lean);
    if (!options_.rpc.control_socket.empty()) out += " and unix:" + options_.rpc.control_socket;
    out += "\n";
  }
  if (const int live = rpc_->liveness_port(); live != 0) {
    const std::string& listen = options_.rpc.listen_address;
    out += "heartbeats (liveness) on " + listen.substr(0, listen.rfind(':')) + ":" +
           std::to_string(live) + "\n";
  }
  if (log_) {
    out += "operation log and snapshots in " + options_.data_dir + ", log synced " +
           (options_.log_sync_ms == 0 ? std::string("before every acknowledgement")
                                      : "every " + std::to_string(options_.log_sync_ms) + " ms") +
           ", snapshot " +
           (options_.snapshot_interval_ms == 0
                ? std::string("at shutdown")
                : "every " + std::to_string(options_.snapshot_interval_ms / 1000) + " s") +
           "\n";
    out += restored_ + "\n";
  } else if (ha_) {
    if (snapshotter_) {
      out += "snapshots in " + options_.data_dir + ", " +
             (options_.snapshot_interval_ms == 0
                  ? std::string("at shutdown")
                  : "every " + std::to_string(options_.snapshot_interval_ms / 1000) + " s") +
             "; the log in etcd trimmed before what every member holds\n";
    }
    out += restored_ + "\n";
  }
  if (http_) {
    std::string base =
        "http://" + HostPort(options_.http_host, static_cast<uint16_t>(http_->port()));
    out += "metrics on " + base + "/metrics, health on " + base + "/health, status page on " +
           base + "/\n";
  }
  return out;
}

void MasterHost::SetCredentials(std::shared_ptr<const auth::ServerCredentials> credentials) {
  if (master_ && credentials) master_->SetTenantQuotas(credentials->file().tenant_quotas);
  if (rpc_) rpc_->SetCredentials(std::move(credentials));
}

void MasterHost::BeginDrain(std::string why) {
  if (rpc_) rpc_->BeginDrain(std::move(why));
}

MasterHost::~MasterHost() {
  StopWatchdog();
  http_.reset();
  if (sampler_.joinable()) {
    {
      std::lock_guard lock(sampler_mu_);
      sampler_stop_ = true;
    }
    sampler_cv_.notify_all();
    sampler_.join();
  }
  // Clients are refused first (retryable), then the engine stops waiting for
  // nodes: a tier move or check in flight, in the maintenance pass or in a
  // put's eviction, ends at once instead of waiting out a stopped or
  // unreachable node's timeout, and nothing starts another. Both waits below
  // are then short: the maintenance pass, and the handlers still running.
  if (rpc_) rpc_->BeginDrain();
  if (master_) master_->BeginShutdown();
  // Maintenance stops before the RPC server: its shutdown may wait out its
  // grace period for open channels, longer than the heartbeat TTL, and the
  // nodes' heartbeats stop reaching it; node expiry would then unmount every
  // segment (and log that), though the nodes are alive and keep their bytes.
  if (master_) master_->StopBackground();
  if (rpc_) rpc_->Shutdown();
  if (snapshotter_) {
    // Nothing changes the engine any more: this snapshot is the whole state,
    // and a restart replays no log after it.
    snapshotter_->Stop();
    if (auto info = snapshotter_->TakeNow(); !info.ok()) {
      std::cerr << "crescent: the shutdown snapshot failed: " << info.status().ToString() << "\n";
    }
    snapshotter_.reset();
  }
}

}  // namespace crescent::server
