// Snapshot files (snapshot_file.h): the writer's blocks and the checked reader.
#include "durability/snapshot_file.h"

#include <fcntl.h>
#include <unistd.h>
#include <xxhash.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstring>
#include <filesystem>
#include <utility>

#include "durability/mapped_file.h"

namespace crescent::durability {

namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'C', 'R', 'S', 'N', 'A', 'P', '0', '1'};
constexpr char kEndMagic[8] = {'C', 'R', 'S', 'N', 'A', 'P', 'E', 'N'};
constexpr size_t kHeaderBytes = 32;
constexpr size_t kBlockHeaderBytes = 16;
constexpr size_t kTrailerBytes = 32;
// A block holds whole records: kBlockRawBytes plus at most one record.
constexpr uint64_t kMaxBlockRawBytes = 16u << 20;
constexpr int kZstdLevel = 1;  // fast: a snapshot is written while serving

void PutFixed(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}
uint64_t GetFixed(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t{static_cast<uint8_t>(p[i])} << (8 * i);
  return v;
}
void PutVarint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}
bool GetVarint(std::string_view* in, uint64_t* v) {
  uint64_t result = 0;
  for (int shift = 0; shift < 64 && !in->empty(); shift += 7) {
    const auto byte = static_cast<uint8_t>(in->front());
    in->remove_prefix(1);
    result |= uint64_t{byte & 0x7fu} << shift;
    if ((byte & 0x80) == 0) {
      *v = result;
      return true;
    }
  }
  return false;
}

Status IoError(const std::string& what, const std::string& path) {
  return Status(ErrorCode::kIoError, what + " '" + path + "': " + std::strerror(errno));
}

Status WriteAll(int fd, std::string_view data, const std::string& path) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return IoError("cannot write snapshot", path);
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

std::string FileName(uint64_t position) {
  char name[48];
  std::snprintf(name, sizeof name, "snapshot-%016" PRIx64 ".crsnap", position);
  return name;
}

bool ParseName(const std::string& name, uint64_t* position) {
  return name.size() == 32 && name.starts_with("snapshot-") && name.ends_with(".crsnap") &&
         std::sscanf(name.c_str(), "snapshot-%16" SCNx64 ".crsnap", position) == 1;
}

}  // namespace

StatusOr<SnapshotWriter> SnapshotWriter::Create(const std::string& dir, uint64_t log_position) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    return Status(ErrorCode::kIoError, "cannot create data dir '" + dir + "': " + ec.message());
  SnapshotWriter w;
  w.dir_ = dir;
  w.final_path_ = (fs::path(dir) / FileName(log_position)).string();
  w.temp_path_ = w.final_path_ + ".tmp";
  w.fd_ = ::open(w.temp_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (w.fd_ < 0) return IoError("cannot create snapshot", w.temp_path_);
  w.info_.path = w.final_path_;
  w.info_.log_position = log_position;
  w.info_.created_unix_ms =
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::chrono::system_clock::now().time_since_epoch())
                                .count());
  std::string header(kMagic, sizeof kMagic);
  PutFixed(header, kSnapshotVersion, 4);
  PutFixed(header, 0, 4);
  PutFixed(header, log_position, 8);
  PutFixed(header, w.info_.created_unix_ms, 8);
  if (Status s = WriteAll(w.fd_, header, w.temp_path_); !s.ok()) return s;
  w.info_.file_bytes = header.size();
  return w;
}

SnapshotWriter::SnapshotWriter(SnapshotWriter&& o) noexcept
    : dir_(std::move(o.dir_)),
      temp_path_(std::move(o.temp_path_)),
      final_path_(std::move(o.final_path_)),
      fd_(std::exchange(o.fd_, -1)),
      block_(std::move(o.block_)),
      info_(std::move(o.info_)) {}

SnapshotWriter::~SnapshotWriter() {
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(temp_path_.c_str());
  }
}

Status SnapshotWriter::Add(const master::LogRecord& record) {
  const std::string bytes = master::EncodeLogRecord(record);
  PutVarint(block_, bytes.size());
  block_ += bytes;
  ++info_.records;
  return block_.size() >= kBlockRawBytes ? FlushBlock() : Status::Ok();
}

Status SnapshotWriter::FlushBlock() {
  if (block_.empty()) return Status::Ok();
  std::string out(kBlockHeaderBytes + ZSTD_compressBound(block_.size()), '\0');
  const size_t n = ZSTD_compress(out.data() + kBlockHeaderBytes, out.size() - kBlockHeaderBytes,
                                 block_.data(), block_.size(), kZstdLevel);
  if (ZSTD_isError(n)) {
    return Status(ErrorCode::kInternal, std::string("zstd: ") + ZSTD_getErrorName(n));
  }
  out.resize(kBlockHeaderBytes + n);
  std::string head;
  PutFixed(head, n, 4);
  PutFixed(head, block_.size(), 4);
  XXH3_state_t* st = XXH3_createState();
  XXH3_64bits_reset(st);
  XXH3_64bits_update(st, head.data(), 8);
  XXH3_64bits_update(st, out.data() + kBlockHeaderBytes, n);
  PutFixed(head, XXH3_64bits_digest(st), 8);
  XXH3_freeState(st);
  std::memcpy(out.data(), head.data(), kBlockHeaderBytes);
  if (Status s = WriteAll(fd_, out, temp_path_); !s.ok()) return s;
  info_.file_bytes += out.size();
  ++info_.blocks;
  block_.clear();
  return Status::Ok();
}

StatusOr<SnapshotInfo> SnapshotWriter::Finish() {
  if (Status s = FlushBlock(); !s.ok()) return s;
  std::string trailer(kEndMagic, sizeof kEndMagic);
  PutFixed(trailer, info_.blocks, 8);
  PutFixed(trailer, info_.records, 8);
  PutFixed(trailer, XXH3_64bits(trailer.data(), trailer.size()), 8);
  if (Status s = WriteAll(fd_, trailer, temp_path_); !s.ok()) return s;
  info_.file_bytes += trailer.size();
  if (::fsync(fd_) != 0) return IoError("cannot sync snapshot", temp_path_);
  ::close(fd_);
  fd_ = -1;
  if (::rename(temp_path_.c_str(), final_path_.c_str()) != 0) {
    const Status s = IoError("cannot rename snapshot", temp_path_);
    ::unlink(temp_path_.c_str());
    return s;
  }
  const int dfd = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY);
  if (dfd < 0) return IoError("cannot open directory", dir_);
  const int rc = ::fsync(dfd);
  ::close(dfd);
  if (rc != 0) return IoError("cannot sync directory", dir_);
  return info_;
}

std::vector<std::string> ListSnapshots(const std::string& dir) {
  std::vector<std::pair<uint64_t, std::string>> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    uint64_t position;
    if (ParseName(e.path().filename().string(), &position)) {
      found.emplace_back(position, e.path().string());
    }
  }
  std::sort(found.begin(), found.end(), std::greater<>());
  std::vector<std::string> out;
  for (auto& [p, path] : found) out.push_back(std::move(path));
  return out;
}

uint64_t SnapshotNamePosition(const std::string& path) {
  uint64_t position = 0;
  return ParseName(fs::path(path).filename().string(), &position) ? position : 0;
}

namespace {

struct CheckedBlock {
  std::string_view compressed;
  uint64_t raw_bytes;
};

// Pass 1: the header, every block's check and the trailer, before anything
// is decoded. Fills *info (records: the trailer's count) and *blocks.
Status CheckSnapshotData(std::string_view data, const std::string& name, SnapshotInfo* info,
                         std::vector<CheckedBlock>* blocks) {
  auto corrupt = [&](const std::string& what) {
    return Status(ErrorCode::kCorruptData, "snapshot '" + name + "': " + what);
  };
  if (data.size() < kHeaderBytes + kTrailerBytes ||
      std::memcmp(data.data(), kMagic, sizeof kMagic) != 0) {
    return corrupt("not a snapshot (bad header)");
  }
  info->path = name;
  info->file_bytes = data.size();
  const auto version = static_cast<uint32_t>(GetFixed(data.data() + 8, 4));
  if (version != kSnapshotVersion) {
    return Status(ErrorCode::kUnsupported, "snapshot '" + name + "': format version " +
                                               std::to_string(version) + ", this build reads " +
                                               std::to_string(kSnapshotVersion));
  }
  info->log_position = GetFixed(data.data() + 16, 8);
  info->created_unix_ms = GetFixed(data.data() + 24, 8);
  std::string_view rest = data.substr(kHeaderBytes);
  for (;;) {
    const std::string block_name = "block " + std::to_string(blocks->size());
    if (rest.size() >= kTrailerBytes && std::memcmp(rest.data(), kEndMagic, 8) == 0) break;
    if (rest.size() < kBlockHeaderBytes) {
      return corrupt(block_name + ": cut short (no trailer: an incomplete file)");
    }
    const uint64_t comp = GetFixed(rest.data(), 4);
    const uint64_t raw = GetFixed(rest.data() + 4, 4);
    const uint64_t check = GetFixed(rest.data() + 8, 8);
    if (rest.size() - kBlockHeaderBytes < comp) return corrupt(block_name + ": cut short");
    if (raw > kMaxBlockRawBytes) return corrupt(block_name + ": size out of range");
    XXH3_state_t* st = XXH3_createState();
    XXH3_64bits_reset(st);
    XXH3_64bits_update(st, rest.data(), 8);
    XXH3_64bits_update(st, rest.data() + kBlockHeaderBytes, comp);
    const uint64_t got = XXH3_64bits_digest(st);
    XXH3_freeState(st);
    if (got != check) return corrupt(block_name + ": checksum mismatch");
    blocks->push_back({rest.substr(kBlockHeaderBytes, comp), raw});
    rest.remove_prefix(kBlockHeaderBytes + comp);
  }
  if (rest.size() != kTrailerBytes ||
      GetFixed(rest.data() + 24, 8) != XXH3_64bits(rest.data(), 24)) {
    return corrupt("bad trailer");
  }
  info->blocks = GetFixed(rest.data() + 8, 8);
  info->records = GetFixed(rest.data() + 16, 8);
  if (info->blocks != blocks->size()) {
    return corrupt("the trailer counts " + std::to_string(info->blocks) + " blocks, the file has " +
                   std::to_string(blocks->size()));
  }
  return Status::Ok();
}

}  // namespace

StatusOr<SnapshotInfo> CheckSnapshot(const std::string& path) {
  auto mapped = MappedFile::Open(path, "snapshot");
  if (!mapped.ok()) return mapped.status();
  SnapshotInfo info;
  std::vector<CheckedBlock> blocks;
  if (Status s = CheckSnapshotData(mapped->data(), path, &info, &blocks); !s.ok()) return s;
  return info;
}

StatusOr<SnapshotInfo> DecodeSnapshot(std::string_view data, const std::string& name,
                                      RecordSink& sink, const SnapshotCheckedFn& checked) {
  auto corrupt = [&](const std::string& what) {
    return Status(ErrorCode::kCorruptData, "snapshot '" + name + "': " + what);
  };
  SnapshotInfo info;
  std::vector<CheckedBlock> blocks;
  if (Status s = CheckSnapshotData(data, name, &info, &blocks); !s.ok()) return s;
  const uint64_t records = info.records;
  info.records = 0;
  if (checked) checked(records);

  // Pass 2: decompress and decode.
  std::string raw;
  for (size_t b = 0; b < blocks.size(); ++b) {
    const std::string block_name = "block " + std::to_string(b);
    raw.resize(blocks[b].raw_bytes);
    const size_t n = ZSTD_decompress(raw.data(), raw.size(), blocks[b].compressed.data(),
                                     blocks[b].compressed.size());
    if (ZSTD_isError(n) || n != raw.size()) return corrupt(block_name + ": does not decompress");
    std::string_view in = raw;
    while (!in.empty()) {
      uint64_t len;
      if (!GetVarint(&in, &len) || len > in.size()) return corrupt(block_name + ": record cut");
      if (Status s = master::DecodeLogRecordInto(in.substr(0, len), &sink.Next()); !s.ok()) {
        return corrupt(block_name + ": " + s.message());
      }
      in.remove_prefix(len);
      ++info.records;
      if (Status s = sink.Commit(); !s.ok()) return s;
    }
  }
  if (info.records != records) {
    return corrupt("the trailer counts " + std::to_string(records) + " records, the blocks hold " +
                   std::to_string(info.records));
  }
  return info;
}

namespace {

// Hands each record to a function, from one slot reused: no allocation per record.
class FnSink final : public RecordSink {
 public:
  explicit FnSink(const SnapshotRecordFn& fn) : fn_(fn) {}
  master::LogRecord& Next() override { return record_; }
  Status Commit() override { return fn_(record_); }

 private:
  const SnapshotRecordFn& fn_;
  master::LogRecord record_;
};

}  // namespace

StatusOr<SnapshotInfo> DecodeSnapshot(std::string_view data, const std::string& name,
                                      const SnapshotRecordFn& fn,
                                      const SnapshotCheckedFn& checked) {
  FnSink sink(fn);
  return DecodeSnapshot(data, name, sink, checked);
}

StatusOr<SnapshotInfo> ReadSnapshot(const std::string& path, RecordSink& sink,
                                    const SnapshotCheckedFn& checked) {
  auto mapped = MappedFile::Open(path, "snapshot");
  if (!mapped.ok()) return mapped.status();
  return DecodeSnapshot(mapped->data(), path, sink, checked);
}

StatusOr<SnapshotInfo> ReadSnapshot(const std::string& path, const SnapshotRecordFn& fn,
                                    const SnapshotCheckedFn& checked) {
  FnSink sink(fn);
  return ReadSnapshot(path, sink, checked);
}

StatusOr<PruneResult> PruneSnapshots(const std::string& dir, size_t keep) {
  PruneResult out;
  size_t whole = 0;
  for (const std::string& path : ListSnapshots(dir)) {
    StatusOr<SnapshotInfo> info = CheckSnapshot(path);
    if (info.ok() && whole < keep) {
      ++whole;
      out.oldest_kept = std::min(out.oldest_kept, SnapshotNamePosition(path));
      continue;
    }
    if (!info.ok()) out.removed_damaged.push_back(info.status().message());
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
      return IoError("cannot remove snapshot", path);
    }
  }
  return out;
}

}  // namespace crescent::durability
