#include "server/ha_snapshots.h"

#include <chrono>
#include <filesystem>
#include <iostream>

#include "durability/batch_pipeline.h"
#include "durability/etcd_log.h"
#include "durability/snapshot_copy.h"

namespace crescent::server {
namespace {

constexpr uint32_t kPartBytes = 1u << 20;

// A directory removed with what it holds when the scope ends.
struct TempDir {
  std::string path;
  ~TempDir() {
    std::error_code ec;
    if (!path.empty()) std::filesystem::remove_all(path, ec);
  }
};

}  // namespace

HaSnapshots::HaSnapshots(HaSnapshotOptions options, std::shared_ptr<etcd::EtcdClient> etcd,
                         std::string cluster)
    : options_(std::move(options)), etcd_(std::move(etcd)), cluster_(std::move(cluster)) {}

HaSnapshots::~HaSnapshots() { StopCopies(); }

uint64_t HaSnapshots::newest() const {
  if (!keeps()) return 0;
  const std::vector<std::string> all = durability::ListSnapshots(options_.data_dir);
  return all.empty() ? 0 : durability::SnapshotNamePosition(all.front());
}

StatusOr<rpc::MasterClient*> HaSnapshots::Leader() {
  if (!leader_) {
    auto made = rpc::MasterClient::Create(options_.leader);
    if (!made.ok()) return made.status();
    leader_ = std::move(made).value();
  }
  return leader_.get();
}

StatusOr<durability::SnapshotInfo> HaSnapshots::CopyFromLeader(const std::string& dir) {
  StatusOr<rpc::MasterClient*> leader = Leader();
  if (!leader.ok()) return leader.status();
  uint64_t want = 0;  // the newest, then the one the first part named
  return durability::CopySnapshot(
      dir, [&](uint64_t offset, uint64_t* position, uint64_t* bytes, std::string* data) -> Status {
        StatusOr<rpc::SnapshotPart> part = (*leader)->ReadSnapshot(want, offset, kPartBytes);
        if (!part.ok()) return part.status();
        want = *position = part->position;
        *bytes = part->file_bytes;
        *data = std::move(part->data);
        return Status::Ok();
      });
}

StatusOr<HaSnapshots::Start> HaSnapshots::Prepare(master::MasterService& engine,
                                                  const std::atomic<bool>& cancelled) {
  Start out;
  std::string path;
  if (keeps()) {
    // A single master's data dir: its snapshots count positions of its own
    // log, not the cluster's.
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(options_.data_dir, ec)) {
      const std::string name = e.path().filename().string();
      if (name.starts_with("log-") && name.ends_with(".crlog")) {
        return Status(ErrorCode::kInvalidArgument,
                      "data dir " + options_.data_dir + " holds a single master's operation log (" +
                          name +
                          "): its snapshots are not of cluster " + cluster_ +
                          "'s log; give a cluster's master a data dir of its own");
      }
    }
    // The newest that reads back whole (a damaged one is skipped, as a
    // restore does).
    for (const std::string& p : durability::ListSnapshots(options_.data_dir)) {
      if (durability::CheckSnapshot(p).ok()) {
        path = p;
        break;
      }
    }
  }
  const uint64_t have = path.empty() ? 0 : durability::SnapshotNamePosition(path);
  StatusOr<std::optional<uint64_t>> first = durability::EtcdLogFirst(*etcd_, cluster_);
  if (!first.ok()) return first.status();
  TempDir temp;
  if (first->has_value() && **first > have) {
    // Trimmed past what this master holds: the leader's newest snapshot.
    std::string dir = options_.data_dir;
    if (dir.empty()) {
      char name[] = "/tmp/crescent-bootstrap-XXXXXX";
      if (::mkdtemp(name) == nullptr) {
        return Status(ErrorCode::kIoError, "cannot make a temporary dir for the bootstrap");
      }
      dir = temp.path = name;
    }
    for (;;) {
      StatusOr<durability::SnapshotInfo> copied = CopyFromLeader(dir);
      if (copied.ok() && copied->log_position >= **first) {
        path = copied->path;
        out.note = "bootstrapped from the leader's snapshot at position " +
                   std::to_string(copied->log_position) + " (the log in etcd starts at " +
                   std::to_string(**first) + ")";
        std::cout << "crescent master: " << out.note << "\n" << std::flush;
        break;
      }
      std::cerr << "crescent master: cluster " << cluster_ << "'s log starts at position "
                << **first << ", after this master's state: waiting for its leader's snapshot ("
                << (copied.ok() ? "it is at " + std::to_string(copied->log_position)
                                : copied.status().ToString())
                << ")\n"
                << std::flush;
      if (cancelled.load(std::memory_order_acquire)) {
        return Status(ErrorCode::kClosed, "stopped while waiting for the leader's snapshot");
      }
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
  } else if (!path.empty()) {
    out.note = "started from its snapshot " + path;
  }
  if (path.empty()) return out;
  durability::BatchPipeline batches(engine, size_t{1} << 15);
  StatusOr<durability::SnapshotInfo> read = durability::ReadSnapshot(
      path, batches, [&](uint64_t count) { engine.ReserveForRestore(count); });
  if (!read.ok()) return read.status();
  out.records = batches.Finish();
  out.position = read->log_position;
  return out;
}

void HaSnapshots::StartCopies() {
  if (!keeps() || options_.copy_interval_ms <= 0 || copier_.joinable()) return;
  copier_ = std::thread([this] {
    std::unique_lock lock(mu_);
    while (!stop_) {
      cv_.wait_for(lock, std::chrono::milliseconds(options_.copy_interval_ms),
                   [this] { return stop_; });
      if (stop_) return;
      lock.unlock();
      CopyOnce();
      lock.lock();
    }
  });
}

void HaSnapshots::CopyOnce() {
  StatusOr<rpc::MasterClient*> leader = Leader();
  // Only a newer one than this member holds is worth the copy.
  StatusOr<rpc::SnapshotPart> head =
      leader.ok() ? (*leader)->ReadSnapshot(0, 0, 1) : StatusOr<rpc::SnapshotPart>(leader.status());
  if (Stopping() || (head.ok() && head->position <= newest())) return;
  StatusOr<durability::SnapshotInfo> copied =
      head.ok() ? CopyFromLeader(options_.data_dir) : head.status();
  if (Stopping()) return;  // this master leads now: its own snapshots count
  if (!copied.ok()) {
    std::cerr << "crescent master: copying the leader's snapshot failed: "
              << copied.status().ToString() << "\n"
              << std::flush;
    return;
  }
  (void)durability::PruneSnapshots(options_.data_dir, std::max<size_t>(1, options_.keep));
}

void HaSnapshots::StopCopies(bool wait) {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (wait && copier_.joinable()) copier_.join();
}

bool HaSnapshots::Stopping() {
  std::lock_guard lock(mu_);
  return stop_;
}

}  // namespace crescent::server
