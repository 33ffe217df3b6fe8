// Snapshotter: takes the master's snapshots (snapshot_file.h) into the data
// dir, on demand and every interval, keeps the newest N, and drops the log
// files that no kept snapshot needs.
//
// One snapshot at a time (take_mu_): a request that arrives while one is being
// taken waits for it and then takes its own. Figures of each go to the
// engine's MasterCounters, so /metrics and `crescent stat` show them. The engine keeps serving
// meanwhile (MasterService::Capture); compression and writing run on the
// calling thread, outside every engine lock.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "durability/file_log.h"
#include "durability/snapshot_file.h"
#include "master/master_service.h"

namespace crescent::durability {

struct SnapshotterOptions {
  std::string dir;
  size_t keep = 2;  // snapshots kept, newest first (at least 1)
  // Whether the log is truncated before the oldest kept snapshot. A cluster's
  // leader keeps its log in etcd, trimmed once every member holds a snapshot
  // past it (server/ha_member.h), so not by its own snapshots alone.
  bool truncate_log = true;
};

// Figures of the last snapshot taken (all 0 before the first).
struct SnapshotStats {
  uint64_t taken = 0;
  uint64_t failed = 0;
  uint64_t last_unix_ms = 0;
  uint64_t last_bytes = 0;
  uint64_t last_objects = 0;
  uint64_t last_log_position = 0;
  double last_duration_ms = 0;
  double last_longest_lock_ms = 0;  // the longest engine lock held for it
  double last_order_lock_ms = 0;    // of which: the policy lock, to copy the order
};

class Snapshotter {
 public:
  // `log` may be null (no log to sync through a snapshot's position, nor to
  // truncate).
  Snapshotter(master::MasterService& master, master::OperationLog* log, SnapshotterOptions options);
  ~Snapshotter();  // stops the periodic thread
  Snapshotter(const Snapshotter&) = delete;
  Snapshotter& operator=(const Snapshotter&) = delete;

  StatusOr<SnapshotInfo> TakeNow();
  // Starts the background thread: a snapshot every interval_ms (0: none),
  // and one soon after each Request().
  void Start(int64_t interval_ms);
  // Asks the background thread (Start()) for a snapshot and returns at once;
  // MasterCounters::snapshots counts it when it is written.
  void Request();
  void Stop();
  SnapshotStats Stats() const;
  // Reads up to `max_bytes` of the snapshot file at `position` (0: the newest;
  // one is taken now when there is none) from `offset` into *data; *found and
  // *file_bytes: its position and size. kObjectNotFound when no snapshot at
  // `position` is kept (a newer one replaced it: read that one).
  Status ReadPart(uint64_t position, uint64_t offset, uint32_t max_bytes, uint64_t* found,
                  uint64_t* file_bytes, std::string* data);

 private:
  master::MasterService& master_;
  master::OperationLog* const log_;
  const SnapshotterOptions options_;

  std::mutex take_mu_;  // one snapshot at a time
  mutable std::mutex stats_mu_;
  SnapshotStats stats_;  // guarded by stats_mu_

  std::mutex bg_mu_;
  std::condition_variable bg_cv_;
  bool bg_stop_ = false;  // guarded by bg_mu_
  bool bg_requested_ = false;
  std::thread bg_;
};

}  // namespace crescent::durability
