// FileOperationLog (file_log.h): framing, the torn-tail scan, the flusher.
#include "durability/file_log.h"

#include "durability/log_frame.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstring>
#include <filesystem>
#include <optional>

#include "common/coding.h"
#include "common/fd.h"
#include "durability/mapped_file.h"

namespace crescent::durability {

namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'C', 'R', 'S', 'L', 'O', 'G', '0', '1'};

std::string FileName(uint64_t start) {
  char name[40];
  std::snprintf(name, sizeof name, "log-%016" PRIx64 ".crlog", start);
  return name;
}

// The start position a header names, or an error naming the file.
StatusOr<uint64_t> HeaderStart(std::string_view data, const std::string& path) {
  if (data.size() < FileOperationLog::kHeaderBytes ||
      std::memcmp(data.data(), kMagic, sizeof kMagic) != 0) {
    return Status(ErrorCode::kCorruptData, "log file '" + path + "': bad header");
  }
  return DecodeFixed64(data.data() + 8);
}

}  // namespace

StatusOr<std::unique_ptr<FileOperationLog>> FileOperationLog::Open(
    const FileLogOptions& options, std::vector<std::string>* warnings) {
  std::error_code ec;
  fs::create_directories(options.dir, ec);
  if (ec) {
    return Status(ErrorCode::kIoError,
                  "cannot create data dir '" + options.dir + "': " + ec.message());
  }
  std::unique_ptr<FileOperationLog> log(new FileOperationLog(options));
  for (const auto& entry : fs::directory_iterator(options.dir, ec)) {
    const std::string name = entry.path().filename().string();
    uint64_t start;
    if (name.size() == 26 && name.starts_with("log-") && name.ends_with(".crlog") &&
        std::sscanf(name.c_str(), "log-%16" SCNx64 ".crlog", &start) == 1) {
      log->files_.push_back({start, entry.path().string()});
    }
  }
  if (ec) return Status(ErrorCode::kIoError, "cannot list '" + options.dir + "': " + ec.message());
  std::sort(log->files_.begin(), log->files_.end(),
            [](const File& a, const File& b) { return a.start < b.start; });
  if (Status s = log->OpenTail(warnings); !s.ok()) return s;
  log->flusher_ = std::thread([l = log.get()] { l->FlushLoop(); });
  return log;
}

Status FileOperationLog::OpenTail(std::vector<std::string>* warnings) {
  if (files_.empty()) {
    end_ = written_ = synced_ = options_.start_position;
    return StartFile(options_.start_position);
  }
  const File tail = files_.back();
  auto mapped = MappedFile::Open(tail.path, "log file");
  if (!mapped.ok()) return mapped.status();
  const size_t size = mapped->data().size();
  if (size < kHeaderBytes) {
    // Torn while it was being created: it never held a record.
    warnings->push_back("log file '" + tail.path + "' is shorter than its header (" +
                        std::to_string(size) + " bytes): a torn creation, removed");
    if (::unlink(tail.path.c_str()) != 0) {
      return IoError("cannot remove log file", tail.path, errno);
    }
    files_.pop_back();
    end_ = written_ = synced_ = tail.start;
    return StartFile(tail.start);
  }
  StatusOr<uint64_t> start = HeaderStart(mapped->data(), tail.path);
  if (!start.ok()) return start.status();
  if (*start != tail.start) {
    return Status(
        ErrorCode::kCorruptData,
        "log file '" + tail.path + "': its header names start position " + std::to_string(*start));
  }
  const uint64_t good = ScanFrames(mapped->data(), kHeaderBytes, [](uint64_t, std::string_view) {});
  mapped->Close();  // before the file may be cut
  if (good < size) {
    warnings->push_back("log file '" + tail.path + "': torn tail at byte " + std::to_string(good) +
                        ", " + std::to_string(size - good) +
                        " bytes cut (a crash during an append)");
    if (::truncate(tail.path.c_str(), static_cast<off_t>(good)) != 0) {
      return IoError("cannot cut log file", tail.path, errno);
    }
  }
  fd_.reset(::open(tail.path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC));
  if (!fd_.valid()) return IoError("cannot open log file", tail.path, errno);
  if (::fdatasync(fd_.get()) != 0) return IoError("cannot sync log file", tail.path, errno);
  file_written_bytes_ = good;
  end_ = written_ = synced_ = tail.start + good - kHeaderBytes;
  return Status::Ok();
}

Status FileOperationLog::StartFile(uint64_t start) {
  const std::string path = (fs::path(options_.dir) / FileName(start)).string();
  ScopedFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600));
  if (!fd.valid()) return IoError("cannot create log file", path, errno);
  std::string header(kMagic, sizeof kMagic);
  PutFixed64(header, start);
  if (!WriteAll(fd.get(), header) || ::fdatasync(fd.get()) != 0) {
    return IoError("cannot write log file", path, errno);
  }
  if (Status s = SyncDir(options_.dir); !s.ok()) return s;
  fd_ = std::move(fd);
  file_written_bytes_ = kHeaderBytes;
  std::lock_guard lock(mu_);  // Stats() reads files_ under mu_ alone
  files_.push_back({start, path});
  return Status::Ok();
}

FileOperationLog::~FileOperationLog() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  flush_cv_.notify_all();
  if (flusher_.joinable()) flusher_.join();
  {
    std::lock_guard io(io_mu_);
    (void)WriteBufferedLocked(true);
  }
}

StatusOr<uint64_t> FileOperationLog::Append(std::string_view record) {
  if (record.size() > kMaxRecordBytes) {
    return Status(ErrorCode::kInvalidArgument,
                  "log record of " + std::to_string(record.size()) + " bytes is over the limit");
  }
  std::string frame;
  frame.reserve(kFrameBytes + record.size());
  AppendFrame(frame, record);
  std::lock_guard lock(mu_);
  if (!error_.ok()) return error_;
  buffer_.append(frame);
  end_ += frame.size();
  if (options_.sync_interval_ms == 0) flush_cv_.notify_one();
  return end_;
}

Status FileOperationLog::WaitDurable(uint64_t position) {
  std::unique_lock lock(mu_);
  if (options_.sync_interval_ms > 0 || synced_ >= position) return error_;
  synced_cv_.wait(lock, [&] { return synced_ >= position || !error_.ok() || stop_; });
  if (!error_.ok()) return error_;
  if (synced_ < position) return Status(ErrorCode::kClosed, "the operation log is closing");
  return Status::Ok();
}

Status FileOperationLog::SyncThrough(uint64_t position) {
  auto done = [&] {
    std::lock_guard lock(mu_);
    if (!error_.ok()) return std::optional<Status>(error_);
    if (synced_ >= position) return std::optional<Status>(Status::Ok());
    return std::optional<Status>();
  };
  if (auto s = done()) return *s;
  std::lock_guard io(io_mu_);
  if (auto s = done()) return *s;  // another caller's sync covered it
  return WriteBufferedLocked(true);
}

uint64_t FileOperationLog::synced_position() const {
  std::lock_guard lock(mu_);
  return synced_;
}

Status FileOperationLog::SkipTo(uint64_t position) {
  std::lock_guard io(io_mu_);
  if (Status s = WriteBufferedLocked(true); !s.ok()) return s;
  {
    std::lock_guard lock(mu_);
    if (position <= end_) return Status::Ok();
  }
  if (Status s = StartFile(position); !s.ok()) return s;
  std::lock_guard lock(mu_);
  end_ = written_ = synced_ = position;
  return Status::Ok();
}

Status FileOperationLog::WriteBufferedLocked(bool sync) {
  std::string batch;
  uint64_t batch_end;
  {
    std::lock_guard lock(mu_);
    if (!error_.ok()) return error_;
    batch.swap(buffer_);
    batch_end = end_;
  }
  Status s;
  if (!batch.empty()) {
    // Only whole batches go to a file, so a file ends at a record boundary.
    if (file_written_bytes_ >= options_.file_bytes) {
      uint64_t start;
      {
        std::lock_guard lock(mu_);
        start = written_;  // where this batch begins
      }
      s = StartFile(start);
    }
    if (s.ok()) {
      // After a failure nothing more is written (error_ is sticky), so the
      // file's size no longer matters.
      if (!WriteAll(fd_.get(), batch)) {
        s = IoError("cannot append to log file", files_.back().path, errno);
      }
      file_written_bytes_ += batch.size();
    }
  }
  bool need_sync = false;
  if (s.ok()) {
    std::lock_guard lock(mu_);
    written_ = batch_end;
    need_sync = sync && synced_ < written_;
  }
  if (s.ok() && need_sync && ::fdatasync(fd_.get()) != 0) {
    s = IoError("cannot sync log file", files_.back().path, errno);
  }
  {
    std::lock_guard lock(mu_);
    if (!s.ok()) {
      if (error_.ok()) error_ = s;
    } else if (need_sync) {
      synced_ = batch_end;
      ++syncs_;
    }
  }
  synced_cv_.notify_all();
  return s;
}

void FileOperationLog::FlushLoop() {
  const auto period = std::chrono::milliseconds(options_.sync_interval_ms);
  for (;;) {
    {
      std::unique_lock lock(mu_);
      if (options_.sync_interval_ms > 0) {
        flush_cv_.wait_for(lock, period, [&] { return stop_; });
      } else {
        // Whether or not anyone waits: a change no call acknowledges (an
        // eviction, a tier move, a node's timeout) is synced as promptly.
        flush_cv_.wait(lock, [&] { return stop_ || (error_.ok() && synced_ < end_); });
      }
      if (stop_) return;
      if (!error_.ok()) continue;
    }
    std::lock_guard io(io_mu_);
    (void)WriteBufferedLocked(true);
  }
}

Status FileOperationLog::ReadFrom(uint64_t position, const RecordFn& fn) {
  std::vector<File> files;
  {
    std::lock_guard io(io_mu_);
    if (Status s = WriteBufferedLocked(false); !s.ok()) return s;
    std::lock_guard lock(mu_);
    files = files_;
  }
  if (position < files.front().start) {
    return Status(ErrorCode::kCorruptData, "the operation log starts at position " +
                                               std::to_string(files.front().start) +
                                               ", after the requested " + std::to_string(position));
  }
  uint64_t expect = 0;  // where the next file must start (0: not known yet)
  for (size_t i = 0; i < files.size(); ++i) {
    const File& f = files[i];
    if (i + 1 < files.size() && files[i + 1].start <= position) continue;
    if (expect != 0 && f.start != expect) {
      return Status(ErrorCode::kCorruptData, "log file '" + f.path + "' starts at position " +
                                                 std::to_string(f.start) + ", not " +
                                                 std::to_string(expect) + ": records are missing");
    }
    auto mapped = MappedFile::Open(f.path, "log file");
    if (!mapped.ok()) return mapped.status();
    const std::string_view data = mapped->data();
    StatusOr<uint64_t> start = HeaderStart(data, f.path);
    if (!start.ok()) return start.status();
    Status out;
    bool boundary = position <= f.start;
    const uint64_t good = ScanFrames(data, kHeaderBytes, [&](uint64_t at, std::string_view payload) {
      const uint64_t pos = f.start + at - kHeaderBytes;
      if (pos == position) boundary = true;
      if (!out.ok() || pos < position) return;
      out = fn(pos, payload);
    });
    if (!out.ok()) return out;
    const uint64_t end = f.start + good - kHeaderBytes;
    if (!boundary && position != end) {
      return Status(ErrorCode::kInvalidArgument,
                    "position " + std::to_string(position) + " is not a record boundary");
    }
    // The newest file may have grown since Open; anything past its good frames
    // there would be a write in progress, which ReadFrom never sees (it wrote
    // the buffer above under io_mu_). Elsewhere it is damage.
    if (good < data.size()) {
      return Status(ErrorCode::kCorruptData,
                    "log file '" + f.path + "': bad record at byte " + std::to_string(good));
    }
    expect = end;
  }
  return Status::Ok();
}

Status FileOperationLog::TruncateBefore(uint64_t position) {
  std::vector<std::string> doomed;
  {
    std::lock_guard io(io_mu_);
    std::lock_guard lock(mu_);
    while (files_.size() > 1 && files_[1].start <= position) {
      doomed.push_back(files_.front().path);
      files_.erase(files_.begin());
    }
  }
  for (const std::string& path : doomed) {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
      return IoError("cannot remove log file", path, errno);
    }
  }
  return doomed.empty() ? Status::Ok() : SyncDir(options_.dir);
}

uint64_t FileOperationLog::end_position() const {
  std::lock_guard lock(mu_);
  return end_;
}

FileLogStats FileOperationLog::Stats() const {
  std::lock_guard lock(mu_);
  return {end_, synced_, files_.front().start, files_.size(), syncs_};
}

}  // namespace crescent::durability
