#include "bench/crescent_backend.h"

#include <algorithm>
#include <chrono>
#include <thread>

namespace crescent::bench {

namespace {
// Keys per untimed batch call, well inside the master's batch and message limits.
constexpr size_t kChunk = 512;
}  // namespace

ClientConfig BenchClientConfig(const std::string& master, const WorkloadOptions& options, bool shm,
                               int tcp_lanes) {
  ClientConfig cfg;
  cfg.master_address = master;
  cfg.use_shared_memory = shm;
  cfg.tcp_lanes = tcp_lanes;
  cfg.tcp_congestion = options.tcp_congestion;
  cfg.verify_checksums = options.verify_checksums;
  cfg.lean_control = options.lean_control;
  cfg.location_cache = options.location_cache;
  cfg.token = options.token;
  cfg.tls = options.tls;
  cfg.transfer_timeout_ms = 60000;
  return cfg;
}

StatusOr<std::unique_ptr<CrescentBackend>> CrescentBackend::Connect(const std::string& master,
                                                                    const WorkloadOptions& options,
                                                                    bool shm, int tcp_lanes) {
  std::unique_ptr<CrescentBackend> b(new CrescentBackend());
  b->shm_ = shm;
  const size_t buffer_size = ClientBufferSize(options);
  for (int c = 0; c < options.clients; ++c) {
    auto client = Client::Connect(BenchClientConfig(master, options, shm, tcp_lanes));
    if (!client.ok()) return client.status();
    if (c == 0) {
      // One call now: an unreachable master fails the run here, naming its
      // address, rather than each of a phase's puts after its own retries.
      if (auto stat = client.value()->Stat(); !stat.ok()) return stat.status();
    }
    if (buffer_size > 0) {
      auto buf = std::make_unique<Buffer>(buffer_size);
      if (Status s = client.value()->RegisterBuffer(buf->data(), buf->size()); !s.ok()) return s;
      // Untimed: the warming would compete with the phases, and a long-running
      // client's buffer was warmed long before.
      client.value()->WaitBuffersWarm();
      b->buffers_.push_back(std::move(buf));
    }
    b->clients_.push_back(std::move(client.value()));
  }
  if (shm) {
    for (int c = 0; c < options.clients; ++c) {
      if (Status s = b->WarmSharedMemory(c); !s.ok()) return s;
    }
  }
  return b;
}

Status CrescentBackend::WarmSharedMemory(int c) {
  Client& client = *clients_[size_t(c)];
  // Small objects, enough for the master to place some on every store node
  // of a small cluster, so that the client maps each node's segment now.
  const std::string prefix = RunPrefix() + "/warm/" + std::to_string(c) + "/";
  const std::vector<std::byte> value(4096, std::byte{0x17});
  for (int i = 0; i < 32; ++i) {
    const std::string key = prefix + std::to_string(i);
    if (Status s = client.Put(key, value); !s.ok()) return s;
    StatusOr<std::vector<std::byte>> got = client.Get(key);
    (void)client.Remove(key, true);
    if (!got.ok()) return got.status();
  }
  // About 1.7 us a page where pages trap (0.45 s per GiB), far less elsewhere.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  for (;;) {
    const ClientCounters n = client.Counters();
    if (n.shm_warmed_bytes >= n.shm_mapped_bytes) return Status::Ok();
    if (std::chrono::steady_clock::now() >= until) {
      return Status(ErrorCode::kTimeout, "shared memory not warmed after 120 s");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

CrescentBackend::~CrescentBackend() {
  for (size_t i = 0; i < buffers_.size(); ++i)
    (void)clients_[i]->UnregisterBuffer(buffers_[i]->data());
}

std::string CrescentBackend::Label(Op op) const {
  static const char* kNames[] = {"put", "get", "batch put", "batch get", "exists", "prefix"};
  return system() + " " + kNames[static_cast<int>(op)];
}

std::vector<Status> CrescentBackend::Put(int c, std::span<const std::string> keys,
                                         std::span<void* const> bufs, uint64_t size, bool batch) {
  Client& client = *clients_[size_t(c)];
  if (!batch) return {client.PutFrom(keys[0], bufs[0], size)};
  const std::vector<size_t> sizes(keys.size(), size);
  return client.BatchPutFrom(keys, bufs, sizes);
}

std::vector<StatusOr<size_t>> CrescentBackend::Get(int c, std::span<const std::string> keys,
                                                   std::span<void* const> bufs, uint64_t size,
                                                   bool batch) {
  Client& client = *clients_[size_t(c)];
  if (!batch) {
    std::vector<StatusOr<size_t>> out;
    out.push_back(client.GetInto(keys[0], bufs[0], size));
    return out;
  }
  const std::vector<size_t> sizes(keys.size(), size);
  return client.BatchGetInto(keys, bufs, sizes);
}

Status CrescentBackend::Exists(int c, std::span<const std::string> keys,
                               std::vector<bool>& present) {
  present.clear();
  for (const StatusOr<bool>& r : clients_[size_t(c)]->BatchExists(keys)) {
    if (!r.ok()) return r.status();
    present.push_back(*r);
  }
  return Status::Ok();
}

StatusOr<size_t> CrescentBackend::QueryPrefix(int c, std::span<const std::string> keys) {
  return clients_[size_t(c)]->BatchQueryPrefix(keys);
}

StatusOr<size_t> CrescentBackend::GetPrefix(int c, std::span<const std::string> keys,
                                            std::span<void* const> bufs, uint64_t size) {
  const std::vector<size_t> sizes(keys.size(), size);
  return clients_[size_t(c)]->GetPrefixInto(keys, bufs, sizes);
}

Status CrescentBackend::Store(std::span<const std::string> keys, uint64_t value_size) {
  // The copying API: the values are tiny.
  const std::vector<std::byte> value(value_size, std::byte{0x42});
  for (size_t start = 0; start < keys.size(); start += kChunk) {
    const auto chunk = keys.subspan(start, std::min(kChunk, keys.size() - start));
    const std::vector<std::span<const std::byte>> values(chunk.size(), value);
    for (const Status& s : clients_[0]->BatchPut(chunk, values)) {
      if (!s.ok()) return s;
    }
  }
  return Status::Ok();
}

void CrescentBackend::Remove(int c, std::span<const std::string> keys) {
  for (size_t start = 0; start < keys.size(); start += kChunk)
    clients_[size_t(c)]->BatchRemove(keys.subspan(start, std::min(kChunk, keys.size() - start)),
                                     true);
}

void CrescentBackend::Settle() {
  // Objects removed under a get's read lease keep their space until the lease
  // ends (the master hands out no range a reader may still copy). Bounded by a
  // default lease and its grace; past that the next puts may evict.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(12);
  for (;;) {
    StatusOr<ClusterStat> st = clients_[0]->Stat();
    if (!st.ok() || st->held_bytes == 0 || std::chrono::steady_clock::now() >= until) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace crescent::bench
