#include "durability/restore.h"

#include <chrono>
#include <vector>

#include "durability/batch_pipeline.h"
#include "durability/file_log.h"
#include "durability/snapshot_file.h"

namespace crescent::durability {

uint64_t LogStartForDir(const std::string& dir) {
  const std::vector<std::string> snaps = ListSnapshots(dir);
  return snaps.empty() ? 0 : SnapshotNamePosition(snaps.front());
}

namespace {

// Applies the log from `position` on; counts the records.
Status ApplyLog(FileOperationLog& log, uint64_t position, master::MasterService& m,
                size_t batch_records, uint64_t* records) {
  BatchPipeline batches(m, batch_records);
  Status s = log.ReadFrom(position, [&](uint64_t at, std::string_view bytes) -> Status {
    if (Status d = master::DecodeLogRecordInto(bytes, &batches.Next()); !d.ok()) {
      return Status(ErrorCode::kCorruptData,
                    "operation log record at position " + std::to_string(at) + ": " + d.message());
    }
    return batches.Commit();
  });
  // On an error the engine is dropped: what was applied of it does not matter.
  if (s.ok()) *records += batches.Finish();
  return s;
}

double MsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

StatusOr<RestoreResult> RestoreMaster(const RestoreOptions& options, FileOperationLog& log,
                                      const MakeMaster& make) {
  const auto start = std::chrono::steady_clock::now();
  RestoreResult out;
  const uint64_t log_first = log.Stats().first_position;
  // Applies the log from `position`, timed.
  auto apply_log = [&](uint64_t position, master::MasterService& m) {
    const auto t = std::chrono::steady_clock::now();
    Status s = ApplyLog(log, position, m, options.batch_records, &out.log_records);
    out.log_ms = MsSince(t);
    return s;
  };
  auto finish = [&](std::unique_ptr<master::MasterService> m) -> StatusOr<RestoreResult> {
    const auto t = std::chrono::steady_clock::now();
    out.summary = m->FinishRestore(options.grace_ms);
    out.finish_ms = MsSince(t);
    out.duration_ms = MsSince(start);
    m->mutable_counters().restore_duration_us.store(static_cast<uint64_t>(out.duration_ms * 1000),
                                                    std::memory_order_relaxed);
    out.master = std::move(m);
    return std::move(out);
  };
  // Nothing usable: fail with `why`, or start empty when allowed.
  auto empty_or_fail = [&](const Status& why) -> StatusOr<RestoreResult> {
    if (!options.allow_empty) {
      return Status(why.code(), why.message() +
                                    ". Give --allow-empty-restore to start empty instead, losing "
                                    "the stored metadata");
    }
    out.warnings.push_back("starting empty (--allow-empty-restore): " + why.message());
    out.started_empty = true;
    out.snapshot.clear();
    out.snapshot_records = 0;
    out.log_records = 0;
    auto fresh = make();
    if (!fresh.ok()) return fresh.status();
    return finish(std::move(fresh).value());
  };
  // Applies snapshot `path` to a fresh engine; the engine, or why not.
  auto apply_snapshot =
      [&](const std::string& path,
          SnapshotInfo* info) -> StatusOr<std::unique_ptr<master::MasterService>> {
    auto m = make();
    if (!m.ok()) return m.status();
    const auto t = std::chrono::steady_clock::now();
    BatchPipeline batches(**m, options.batch_records);
    // The reservation runs before the first record is committed, so before
    // the applier uses the engine.
    auto read =
        ReadSnapshot(path, batches, [&](uint64_t count) { (*m)->ReserveForRestore(count); });
    if (!read.ok()) return read.status();
    *info = *read;
    out.snapshot = path;
    out.snapshot_records = batches.Finish();
    out.snapshot_ms = MsSince(t);
    return m;
  };
  const uint64_t log_end = log.Stats().end_position;
  // The newest whole snapshot that lies beyond the log's end (the records
  // between were lost: a snapshot published before they were synced, by an
  // older build): used only when nothing else is.
  std::string beyond;
  for (const std::string& path : ListSnapshots(options.dir)) {
    const uint64_t position = SnapshotNamePosition(path);
    if (position < log_first) {
      out.warnings.push_back("snapshot " + path + " skipped: the operation log after it (from " +
                             std::to_string(position) + ") was deleted; it begins at " +
                             std::to_string(log_first));
      continue;
    }
    if (position > log_end) {
      out.warnings.push_back("snapshot " + path + " lies beyond the operation log's end (" +
                             std::to_string(position) + " > " + std::to_string(log_end) +
                             "): trying an older one");
      if (beyond.empty()) beyond = path;
      continue;
    }
    SnapshotInfo info;
    auto m = apply_snapshot(path, &info);
    if (!m.ok()) {
      // A fresh engine tries the older one (ReadSnapshot checks every block
      // before it decodes any, so a damaged file usually applied nothing).
      out.warnings.push_back("snapshot refused, trying an older one: " + m.status().message());
      continue;
    }
    if (Status s = apply_log(info.log_position, **m); !s.ok()) {
      // The log does not go on from this snapshot's position (damage after
      // it, or a position inside a record): an older snapshot, or the whole
      // log, may still reach a consistent state.
      out.warnings.push_back("restoring from " + path + ": " + s.message() +
                             "; trying an older snapshot");
      out.log_records = 0;
      continue;
    }
    return finish(std::move(m).value());
  }
  out.snapshot.clear();
  out.snapshot_records = 0;
  if (log_first == 0) {
    // No snapshot (or none usable) but the whole log: replay it all.
    auto m = make();
    if (!m.ok()) return m.status();
    Status s = apply_log(0, **m);
    if (s.ok()) return finish(std::move(m).value());
    out.warnings.push_back("replaying the whole operation log: " + s.message());
    out.log_records = 0;
  }
  if (!beyond.empty()) {
    // Consistent on its own: the log's records after its position are gone,
    // so the log goes on from there.
    SnapshotInfo info;
    auto m = apply_snapshot(beyond, &info);
    if (m.ok()) {
      if (Status s = log.SkipTo(info.log_position); !s.ok()) return s;
      out.warnings.push_back("restored from " + beyond +
                             " alone; the operation log goes on from its position");
      return finish(std::move(m).value());
    }
    out.warnings.push_back("snapshot refused: " + m.status().message());
    out.snapshot.clear();
  }
  std::string why = "no usable snapshot in " + options.dir;
  why += log_first == 0
             ? std::string(", and the operation log does not replay")
             : ", and the operation log begins at position " + std::to_string(log_first) +
                   " (what came before is only in snapshots)";
  for (const std::string& w : out.warnings) why += "; " + w;
  return empty_or_fail(Status(ErrorCode::kCorruptData, why));
}

std::string DescribeRestore(const RestoreResult& r) {
  const auto& s = r.summary;
  std::string out = "restored " + std::to_string(s.objects) + " objects on " +
                    std::to_string(s.segments) + " segments in " +
                    std::to_string(static_cast<int64_t>(r.duration_ms)) + " ms from ";
  out += r.snapshot.empty() ? std::string("no snapshot")
                            : r.snapshot + " (" + std::to_string(r.snapshot_records) + " records)";
  out += " and " + std::to_string(r.log_records) + " log records";
  out += " (snapshot " + std::to_string(static_cast<int64_t>(r.snapshot_ms)) + " ms, log " +
         std::to_string(static_cast<int64_t>(r.log_ms)) + " ms, finish " +
         std::to_string(static_cast<int64_t>(r.finish_ms)) + " ms)";
  if (s.dropped_unmounted + s.skipped != 0) {
    out += "; dropped " + std::to_string(s.dropped_unmounted) + " on unmounted segments, skipped " +
           std::to_string(s.skipped) + " records";
  }
  out +=
      "; segments wait for their nodes to take them over; their allocators, the eviction order, "
      "key indexes and Bloom filter are completed while serving";
  return out;
}

}  // namespace crescent::durability
