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

#include "common/coding.h"
#include "common/fd.h"
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
  w.fd_.reset(::open(w.temp_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (!w.fd_.valid()) return IoError("cannot create snapshot", w.temp_path_, errno);
  w.info_.path = w.final_path_;
  w.info_.log_position = log_position;
  w.info_.created_unix_ms =
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::chrono::system_clock::now().time_since_epoch())
                                .count());
  std::string header(kMagic, sizeof kMagic);
  PutFixed32(header, kSnapshotVersion);
  PutFixed32(header, 0);
  PutFixed64(header, log_position);
  PutFixed64(header, w.info_.created_unix_ms);
  if (!WriteAll(w.fd_.get(), header)) {
    return IoError("cannot write snapshot", w.temp_path_, errno);
  }
  w.info_.file_bytes = header.size();
  return w;
}

SnapshotWriter::SnapshotWriter(SnapshotWriter&& o) noexcept = default;

SnapshotWriter::~SnapshotWriter() {
  if (fd_.valid()) {
    fd_.reset();
    ::unlink(temp_path_.c_str());
  }
}

Status SnapshotWriter::Add(const master::LogRecord& record) {
  const std::string bytes = master::EncodeLogRecord(record);
  PutLengthPrefixed(block_, bytes);
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
  PutFixed32(head, static_cast<uint32_t>(n));
  PutFixed32(head, static_cast<uint32_t>(block_.size()));
  XXH3_state_t* st = XXH3_createState();
  XXH3_64bits_reset(st);
  XXH3_64bits_update(st, head.data(), 8);
  XXH3_64bits_update(st, out.data() + kBlockHeaderBytes, n);
  PutFixed64(head, XXH3_64bits_digest(st));
  XXH3_freeState(st);
  std::memcpy(out.data(), head.data(), kBlockHeaderBytes);
  if (!WriteAll(fd_.get(), out)) return IoError("cannot write snapshot", temp_path_, errno);
  info_.file_bytes += out.size();
  ++info_.blocks;
  block_.clear();
  return Status::Ok();
}

StatusOr<SnapshotInfo> SnapshotWriter::Finish() {
  if (Status s = FlushBlock(); !s.ok()) return s;
  std::string trailer(kEndMagic, sizeof kEndMagic);
  PutFixed64(trailer, info_.blocks);
  PutFixed64(trailer, info_.records);
  PutFixed64(trailer, XXH3_64bits(trailer.data(), trailer.size()));
  if (!WriteAll(fd_.get(), trailer)) {
    return IoError("cannot write snapshot", temp_path_, errno);
  }
  info_.file_bytes += trailer.size();
  if (::fsync(fd_.get()) != 0) return IoError("cannot sync snapshot", temp_path_, errno);
  fd_.reset();
  if (::rename(temp_path_.c_str(), final_path_.c_str()) != 0) {
    const Status s = IoError("cannot rename snapshot", temp_path_, errno);
    ::unlink(temp_path_.c_str());
    return s;
  }
  if (Status s = SyncDir(dir_); !s.ok()) return s;
  return info_;
}

std::string SnapshotPath(const std::string& dir, uint64_t position) {
  return (fs::path(dir) / FileName(position)).string();
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
  const uint32_t version = DecodeFixed32(data.data() + 8);
  if (version != kSnapshotVersion) {
    return Status(ErrorCode::kUnsupported, "snapshot '" + name + "': format version " +
                                               std::to_string(version) + ", this build reads " +
                                               std::to_string(kSnapshotVersion));
  }
  info->log_position = DecodeFixed64(data.data() + 16);
  info->created_unix_ms = DecodeFixed64(data.data() + 24);
  std::string_view rest = data.substr(kHeaderBytes);
  for (;;) {
    const std::string block_name = "block " + std::to_string(blocks->size());
    if (rest.size() >= kTrailerBytes && std::memcmp(rest.data(), kEndMagic, 8) == 0) break;
    if (rest.size() < kBlockHeaderBytes) {
      return corrupt(block_name + ": cut short (no trailer: an incomplete file)");
    }
    const uint64_t comp = DecodeFixed32(rest.data());
    const uint64_t raw = DecodeFixed32(rest.data() + 4);
    const uint64_t check = DecodeFixed64(rest.data() + 8);
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
      DecodeFixed64(rest.data() + 24) != XXH3_64bits(rest.data(), 24)) {
    return corrupt("bad trailer");
  }
  info->blocks = DecodeFixed64(rest.data() + 8);
  info->records = DecodeFixed64(rest.data() + 16);
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
    ByteReader in(raw);
    while (in.remaining() > 0) {
      std::string_view record;
      if (!in.LengthPrefixed(&record)) return corrupt(block_name + ": record cut");
      if (Status s = master::DecodeLogRecordInto(record, &sink.Next()); !s.ok()) {
        return corrupt(block_name + ": " + s.message());
      }
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
      return IoError("cannot remove snapshot", path, errno);
    }
  }
  return out;
}

}  // namespace crescent::durability
