// Restore: rebuilding a master from its data dir at start-up
// (docs/durability.md). The newest snapshot that reads back whole is applied,
// then the operation log from the position it covers; the engine then waits
// for its store nodes to take their segments over
// (MasterService::FinishRestore).
//
// A snapshot that fails its checks is refused with a warning naming the file
// and the block, and the next older one is tried (the log still holds what it
// needs: files are dropped only before the oldest kept snapshot). Damage in
// the log itself (not a torn tail, which opening the log already cut) fails
// the restore: applying only part of it would lose acknowledged changes
// silently. With no usable snapshot and a log that does not reach back to
// position 0, the restore fails too, unless `allow_empty`: then the master
// starts empty, with a warning.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "crescent/status.h"
#include "durability/file_log.h"
#include "master/master_service.h"

namespace crescent::durability {

struct RestoreOptions {
  std::string dir;
  bool allow_empty = false;
  // How long restored segments wait for their nodes (FinishRestore).
  int64_t grace_ms = 0;
  // Records per batch handed to the engine (BatchPipeline); tests use a few.
  size_t batch_records = size_t{1} << 15;
};

struct RestoreResult {
  std::unique_ptr<master::MasterService> master;
  std::string snapshot;  // the snapshot applied; empty: none
  uint64_t snapshot_records = 0;
  uint64_t log_records = 0;
  bool started_empty = false;  // nothing was usable, and allow_empty said go on
  master::MasterService::RestoreSummary summary;
  double duration_ms = 0;
  // Where it went: applying the snapshot (read, check, decode, apply), the
  // log after it, and FinishRestore (replica sweep, allocators, key indexes).
  double snapshot_ms = 0;
  double log_ms = 0;
  double finish_ms = 0;
  std::vector<std::string> warnings;
};

// Where a log opened on `dir` must start when it has no files: the newest
// snapshot's position (a restore whose log was deleted continues from it).
uint64_t LogStartForDir(const std::string& dir);

// `make` creates an empty engine attached to `log`; a restore that has to
// give up on a snapshot part-way starts again with a fresh one.
using MakeMaster = std::function<StatusOr<std::unique_ptr<master::MasterService>>()>;
StatusOr<RestoreResult> RestoreMaster(const RestoreOptions& options, FileOperationLog& log,
                                      const MakeMaster& make);

// One line for the start-up banner: what was restored from where.
std::string DescribeRestore(const RestoreResult& r);

}  // namespace crescent::durability
