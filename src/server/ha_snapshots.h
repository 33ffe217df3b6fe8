// HaSnapshots: the snapshots of one master of a cluster on etcd (docs/ha.md,
// "Trimming the log"). With a data dir, the leader writes its own
// (durability/snapshotter.h, driven by MasterHost) and each standby keeps
// copies of the leader's newest, read over the ReadSnapshot RPC every copy
// interval; every member reports its newest in its member record, and the
// leader trims the log in etcd only before what every member that keeps
// snapshots holds (HaMember). A master starting on a cluster whose log no
// longer reaches back to its own newest snapshot (or to 0, without one)
// bootstraps: it copies the leader's newest snapshot first (into its data
// dir, or a temporary dir without one), applies it, and follows the log from
// there.
//
// Thread-safety: Prepare() before StartCopies(); newest() from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "crescent/status.h"
#include "durability/snapshot_file.h"
#include "etcd/etcd_client.h"
#include "master/master_service.h"
#include "rpc/master_client.h"

namespace crescent::server {

struct HaSnapshotOptions {
  std::string data_dir;  // empty: this member keeps no snapshots
  size_t keep = 2;       // snapshots kept, newest first
  // How often a standby copies the leader's newest snapshot (0: never).
  int64_t copy_interval_ms = 300'000;
  // The client to the leader (its address: the cluster's etcd:// address;
  // the token and TLS files, where the leader asks for them).
  rpc::MasterClientOptions leader;
};

class HaSnapshots {
 public:
  HaSnapshots(HaSnapshotOptions options, std::shared_ptr<etcd::EtcdClient> etcd,
              std::string cluster);
  ~HaSnapshots();  // StopCopies()

  // Where a fresh `engine` starts following the cluster's log: the newest
  // snapshot of the data dir applied to it when the log continues from it,
  // else (the log was trimmed past it) the leader's newest, copied then
  // applied; position 0 with nothing applied when the log reaches back to 0.
  // A bootstrap tries again every second while no leader answers, until
  // `cancelled`.
  struct Start {
    uint64_t position = 0;
    uint64_t records = 0;  // the snapshot's
    std::string note;      // what it did, for the start-up banner
  };
  StatusOr<Start> Prepare(master::MasterService& engine, const std::atomic<bool>& cancelled);

  // A standby's copies of the leader's snapshots, every copy interval (a
  // thread of its own), until StopCopies(). With `wait` false it only asks
  // the thread to stop: a copy under way may be waiting for a leader, which
  // may be this very master, getting ready (the destructor joins it).
  void StartCopies();
  void StopCopies(bool wait = true);

  bool keeps() const { return !options_.data_dir.empty(); }
  // The newest snapshot in the data dir: its position (0: none).
  uint64_t newest() const;
  const std::string& data_dir() const { return options_.data_dir; }

 private:
  // Copies the leader's newest snapshot into `dir`.
  StatusOr<durability::SnapshotInfo> CopyFromLeader(const std::string& dir);
  StatusOr<rpc::MasterClient*> Leader();
  void CopyOnce();
  bool Stopping();

  const HaSnapshotOptions options_;
  std::shared_ptr<etcd::EtcdClient> etcd_;
  const std::string cluster_;
  std::unique_ptr<rpc::MasterClient> leader_;  // made on first use
  std::mutex mu_;                              // guards stop_
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread copier_;
};

}  // namespace crescent::server
