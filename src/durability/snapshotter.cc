#include "durability/snapshotter.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>

#include "common/fd.h"

namespace crescent::durability {

Snapshotter::Snapshotter(master::MasterService& master, master::OperationLog* log,
                         SnapshotterOptions options)
    : master_(master), log_(log), options_(std::move(options)) {}

Snapshotter::~Snapshotter() { Stop(); }

StatusOr<SnapshotInfo> Snapshotter::TakeNow() {
  std::lock_guard take(take_mu_);
  const auto start = std::chrono::steady_clock::now();
  uint64_t position = 0;
  std::optional<SnapshotWriter> writer;  // opened once the position is known
  auto sink = [&](const master::LogRecord& r) -> Status {
    if (!writer) {
      auto w = SnapshotWriter::Create(options_.dir, position);
      if (!w.ok()) return w.status();
      writer.emplace(std::move(w).value());
    }
    return writer->Add(r);
  };
  master::MasterService::CaptureStats cs;
  Status s = master_.Capture(&position, sink, &cs);
  if (s.ok() && !writer) {  // nothing to hold: an empty snapshot
    auto w = SnapshotWriter::Create(options_.dir, position);
    if (w.ok()) {
      writer.emplace(std::move(w).value());
    } else {
      s = w.status();
    }
  }
  // The snapshot names its position as the place the log goes on from: a
  // restore reads the log from there. Published before those records are on
  // stable storage, it could name a position a crash leaves beyond the log's
  // end, or inside a record cut as a torn tail.
  if (s.ok() && log_ != nullptr) s = log_->SyncThrough(position);
  StatusOr<SnapshotInfo> info = s;
  if (s.ok()) info = writer->Finish();
  if (info.ok()) {
    StatusOr<PruneResult> pruned = PruneSnapshots(options_.dir, std::max<size_t>(1, options_.keep));
    if (!pruned.ok()) {
      info = pruned.status();
    } else {
      for (const std::string& why : pruned->removed_damaged) {
        std::fprintf(stderr, "crescent: removed a damaged snapshot: %s\n", why.c_str());
      }
      if (log_ != nullptr && options_.truncate_log && pruned->oldest_kept != UINT64_MAX) {
        if (Status t = log_->TruncateBefore(pruned->oldest_kept); !t.ok()) info = t;
      }
    }
  }
  master::MasterCounters& c = master_.mutable_counters();
  std::lock_guard lock(stats_mu_);
  if (!info.ok()) {
    ++stats_.failed;
    c.snapshot_failures.fetch_add(1, std::memory_order_relaxed);
    return info;
  }
  ++stats_.taken;
  stats_.last_unix_ms = info->created_unix_ms;
  stats_.last_bytes = info->file_bytes;
  stats_.last_objects = cs.objects;
  stats_.last_log_position = info->log_position;
  stats_.last_duration_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  stats_.last_longest_lock_ms = cs.longest_lock_ms;
  stats_.last_order_lock_ms = cs.order_lock_ms;
  auto us = [](double ms) { return static_cast<uint64_t>(ms * 1000); };
  c.last_snapshot_unix_ms.store(stats_.last_unix_ms, std::memory_order_relaxed);
  c.last_snapshot_bytes.store(stats_.last_bytes, std::memory_order_relaxed);
  c.last_snapshot_objects.store(stats_.last_objects, std::memory_order_relaxed);
  c.last_snapshot_duration_us.store(us(stats_.last_duration_ms), std::memory_order_relaxed);
  c.last_snapshot_longest_lock_us.store(us(stats_.last_longest_lock_ms), std::memory_order_relaxed);
  c.last_snapshot_log_position.store(stats_.last_log_position, std::memory_order_relaxed);
  c.snapshots.fetch_add(1, std::memory_order_relaxed);  // last: a poller sees the figures
  return info;
}

void Snapshotter::Start(int64_t interval_ms) {
  if (bg_.joinable()) return;
  bg_ = std::thread([this, interval_ms] {
    using Clock = std::chrono::steady_clock;
    auto next = Clock::now() + std::chrono::milliseconds(interval_ms);
    std::unique_lock lock(bg_mu_);
    for (;;) {
      auto due = [&] {
        return bg_stop_ || bg_requested_ || (interval_ms > 0 && Clock::now() >= next);
      };
      if (interval_ms > 0) {
        bg_cv_.wait_until(lock, next, due);
      } else {
        bg_cv_.wait(lock, due);
      }
      if (bg_stop_) return;
      if (!due()) continue;
      bg_requested_ = false;
      lock.unlock();
      (void)TakeNow();  // a failure is counted in Stats(); the next one tries again
      next = Clock::now() + std::chrono::milliseconds(interval_ms);
      lock.lock();
    }
  });
}

void Snapshotter::Request() {
  {
    std::lock_guard lock(bg_mu_);
    bg_requested_ = true;
  }
  bg_cv_.notify_all();
}

void Snapshotter::Stop() {
  {
    std::lock_guard lock(bg_mu_);
    bg_stop_ = true;
  }
  bg_cv_.notify_all();
  if (bg_.joinable()) bg_.join();
}

Status Snapshotter::ReadPart(uint64_t position, uint64_t offset, uint32_t max_bytes,
                             uint64_t* found, uint64_t* file_bytes, std::string* data) {
  std::string path;
  for (const std::string& p : ListSnapshots(options_.dir)) {
    if (position == 0 || SnapshotNamePosition(p) == position) {
      path = p;
      break;
    }
  }
  if (path.empty() && position == 0) {
    StatusOr<SnapshotInfo> taken = TakeNow();
    if (!taken.ok()) return taken.status();
    path = taken->path;
  }
  if (path.empty()) {
    return Status(ErrorCode::kObjectNotFound,
                  "no snapshot at log position " + std::to_string(position) +
                      " is kept any more in " + options_.dir + ": read the newest");
  }
  ScopedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  struct stat st {};
  if (!fd.valid() || ::fstat(fd.get(), &st) != 0) {
    return Status(errno == ENOENT ? ErrorCode::kObjectNotFound : ErrorCode::kIoError,
                  "snapshot " + path + ": " + std::strerror(errno));
  }
  *found = SnapshotNamePosition(path);
  *file_bytes = static_cast<uint64_t>(st.st_size);
  data->clear();
  if (offset >= *file_bytes) return Status::Ok();
  data->resize(std::min<uint64_t>(max_bytes, *file_bytes - offset));
  size_t done = 0;
  while (done < data->size()) {
    const ssize_t n = ::pread(fd.get(), data->data() + done, data->size() - done,
                              static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return Status(ErrorCode::kIoError, "snapshot " + path + ": reading at " +
                                             std::to_string(offset + done) + ": " +
                                             (n == 0 ? "unexpected end" : std::strerror(errno)));
    }
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

SnapshotStats Snapshotter::Stats() const {
  std::lock_guard lock(stats_mu_);
  return stats_;
}

}  // namespace crescent::durability
