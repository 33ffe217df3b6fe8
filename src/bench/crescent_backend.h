// Crescent as a `crescent bench` backend: one connected Client per client
// thread, each with a registered buffer, so puts and gets are the zero-copy
// calls (PutFrom/GetInto, their batch forms) an inference engine makes.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "bench/backend.h"
#include "bench/workloads.h"
#include "crescent/client.h"

namespace crescent::bench {

// The configuration of every bench client: the master, the options' TCP
// congestion control, checksum checks, control protocol, token and TLS.
ClientConfig BenchClientConfig(const std::string& master, const WorkloadOptions& options, bool shm,
                               int tcp_lanes);

class CrescentBackend : public Backend {
 public:
  // shm: use same-host shared memory when the store node offers it. Then each
  // client, untimed, also maps the store nodes' segments (small puts and
  // gets) and waits until it has read each page once (ClientCounters::
  // shm_warmed_bytes), as a long-running client has: the memcpy reference
  // copies out of memory it touched before too.
  static StatusOr<std::unique_ptr<CrescentBackend>> Connect(const std::string& master,
                                                            const WorkloadOptions& options,
                                                            bool shm, int tcp_lanes);
  ~CrescentBackend() override;

  std::string system() const override { return shm_ ? "crescent-shm" : "crescent-tcp"; }
  std::string exists_system() const override { return "crescent"; }
  std::string Label(Op op) const override;
  int connections() const override { return static_cast<int>(clients_.size()); }
  std::byte* buffer(int c) override { return buffers_[size_t(c)]->data(); }

  std::vector<Status> Put(int c, std::span<const std::string> keys, std::span<void* const> bufs,
                          uint64_t size, bool batch) override;
  std::vector<StatusOr<size_t>> Get(int c, std::span<const std::string> keys,
                                    std::span<void* const> bufs, uint64_t size,
                                    bool batch) override;
  Status Exists(int c, std::span<const std::string> keys, std::vector<bool>& present) override;
  StatusOr<size_t> QueryPrefix(int c, std::span<const std::string> keys) override;
  // Client c's GetPrefixInto of `keys`, page i into bufs[i] (`size` bytes
  // each); Crescent's own (prefix_get.h).
  StatusOr<size_t> GetPrefix(int c, std::span<const std::string> keys, std::span<void* const> bufs,
                             uint64_t size);
  ClientCounters Counters(int c) const { return clients_[size_t(c)]->Counters(); }

  Status Store(std::span<const std::string> keys, uint64_t value_size) override;
  void Remove(int c, std::span<const std::string> keys) override;
  void Settle() override;

 private:
  CrescentBackend() = default;
  // The untimed mapping and warming of `shm` above, for client c.
  Status WarmSharedMemory(int c);
  bool shm_ = false;
  std::vector<std::unique_ptr<Client>> clients_;
  std::vector<std::unique_ptr<Buffer>> buffers_;
};

}  // namespace crescent::bench
