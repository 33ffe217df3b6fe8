// StoreNode: one store node's life. It owns a DRAM segment (a memfd) and any
// number of persistent segments (files, pmem_file.h), serves them over TCP and
// same-host shared memory, mounts each on the master and heartbeats.
//
//  - Start() binds the data servers first, so the endpoint it mounts with (and
//    that capabilities are bound to) is final before any client can learn it.
//  - Every mount draws a new random epoch, carried in the endpoint string the
//    node mounts with (endpoint.h); capabilities are bound to that string, so
//    the node refuses every capability of an earlier mount, or of another
//    process on the same port, on TCP and on shared memory alike.
//  - The heartbeat thread remounts when the master answers NODE_UNKNOWN: the
//    master restarted, or it declared us dead after a silence. The node offers
//    its previous mount (endpoint and owner token) and the few before it: a
//    master restored from its data dir takes the segment over with the objects
//    it knew in it when it can prove one of them (docs/durability.md); any
//    other master mounts it as empty space.
//  - A mount whose answer never came (the master unreachable, or too slow) is
//    sent again as it was, at each heartbeat while the master knows the node:
//    the master answers a repeat as it answered the first. After a master
//    restart (NODE_UNKNOWN) it is offered as an earlier mount instead, and a
//    new epoch is drawn (capabilities the old master issued for it stay
//    refused). Every segment left unmounted is mounted again at each
//    heartbeat, persistent ones too.
//    Before it remounts, the node refuses every capability (id 0) and closes
//    the connections of same-host clients that map its memory, so that none
//    of them returns bytes it read after the space changed hands.
//    A persistent segment is mounted under the name "pmem-UUID" of its file's
//    header: a node restarted with the same file presents the same segment,
//    and a master that still knows its objects takes it over (tier PMEM).
//  - Each heartbeat (and one before the first mount) reads the master's clock:
//    while this node's wall clock differs from it by more than the master's
//    --capability-grace-ms, every segment refuses every capability
//    (transfer/clock_gate.h; docs/capabilities.md, "Clock skew").
//  - Stop() unmounts (best effort: the master may be gone), then stops serving.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/endpoint.h"
#include "crescent/status.h"
#include "metrics/text_writer.h"
#include "rpc/master_client.h"
#include "transfer/capability.h"
#include "transfer/clock_gate.h"
#include "transfer/page_warmer.h"
#include "transfer/segment_memory.h"
#include "transfer/shm_server.h"
#include "transfer/tcp_server.h"
#include "transfer/transfer_metrics.h"

namespace crescent::store {

// One persistent segment: the file and its size (`--pmem PATH:SIZE`).
struct PersistentSegmentOptions {
  std::string path;
  uint64_t file_size = 0;
};

struct StoreNodeOptions {
  std::string node_id;       // default: HOSTNAME-PID
  std::string segment_name;  // default: NODE_ID/dram0
  uint64_t segment_size = uint64_t{1} << 30;
  std::vector<PersistentSegmentOptions> persistent;  // tier PMEM, in this order
  std::string host = "127.0.0.1";  // data plane: bind (and advertise, unless advertise_host)
  // The address clients are told to connect to; empty: `host`. Required when
  // `host` is a wildcard (0.0.0.0, ::), which no client can connect to.
  std::string advertise_host;
  uint16_t port = 0;  // 0: any free port
  int io_threads = 2;
  std::string tcp_congestion;  // TCP_CONGESTION of data connections; "" = system default
  transfer::ConnectionLimits limits;  // the data port's connection cap and idle timeout
  bool shared_memory = true;   // offer the memfd to same-host clients
  // Touch every page of the segment once in the background after start, so the
  // first transfers into it do not pay first-access traps (page_warmer.h).
  bool warm_pages = true;
  int64_t heartbeat_interval_ms = 1000;
  rpc::MasterClientOptions master;
};

class StoreNode {
 public:
  static StatusOr<std::unique_ptr<StoreNode>> Start(const StoreNodeOptions& options,
                                                    const std::string& secret);
  ~StoreNode();  // Stop()s
  void Stop();

  const std::string& node_id() const { return options_.node_id; }
  // The DRAM segment: name, endpoint of its current mount (it changes at each
  // remount), id and size.
  const std::string& segment_name() const { return options_.segment_name; }
  std::string endpoint() const { return endpoint(0); }
  uint16_t port() const { return tcp_->port(); }
  uint32_t segment_id() const { return segments_[0].memory->id(); }
  uint64_t remounts() const;
  uint64_t segment_size() const { return options_.segment_size; }
  // Every segment, the DRAM one first, then the persistent ones in the
  // order of options.persistent.
  size_t segment_count() const { return segments_.size(); }
  const std::string& segment_name(size_t i) const { return segments_[i].name; }
  std::string endpoint(size_t i) const;
  // A segment's memory, writable: for tests that model a stray write the
  // data plane never sees (client_checksum_test).
  transfer::SegmentMemory& segment_memory(size_t i = 0) { return *segments_[i].memory; }
  // Bytes of the segment whose pages the warmer touched (0 without warming).
  uint64_t warmed_bytes() const { return warmer_ ? warmer_->warmed_bytes() : 0; }
  // Whether this node's clock agrees with the master's (clock_gate.h).
  const transfer::ClockGate& clock_gate() const { return clock_gate_; }
  // The data plane's counters (transfer_metrics.h).
  const transfer::TransferMetrics& transfer_metrics() const { return transfer_metrics_; }
  // The node's crescent_store_* families (docs/metrics.md) for a /metrics.
  void CollectMetrics(metrics::TextWriter& w) const;
  // Blocks until the warmer finished or was stopped; returns at once without one.
  void WaitPagesWarm() {
    if (warmer_) warmer_->Wait();
  }

 private:
  StoreNode(StoreNodeOptions options, transfer::CapabilitySigner signer)
      : options_(std::move(options)), signer_(std::move(signer)) {}
  // Mounts every segment not mounted yet; after a master restart (`fresh`)
  // all of them, with new epochs. The first failure, after trying each.
  Status Mount(bool fresh);
  bool AnyUnmounted() const;
  void HeartbeatLoop();
  // One heartbeat: its status, the master's clock read from its reply into
  // the clock gate, and a line on stderr when the gate opens or closes.
  Status HeartbeatOnce();

  struct Segment {
    std::unique_ptr<transfer::SegmentMemory> memory;
    std::string name;
    master::Tier tier = master::Tier::kDram;
    // Of the current mount (mu_): its endpoint (with its epoch), its owner
    // token (master.proto SegmentSpec), and whether the master took the
    // segment over with its objects.
    std::string endpoint;
    uint64_t owner_token = 0;
    bool adopted = false;
    // Mounts of this segment a master may still know it by, newest first
    // (the current one included), at most kRememberedMounts.
    std::vector<master::MountIdentity> remembered;
    // A mount sent whose answer never came: sent again as it is (mu_).
    std::optional<master::SegmentSpec> unanswered;
  };
  static constexpr size_t kRememberedMounts = 4;
  void AddSegment(std::unique_ptr<transfer::SegmentMemory> memory, std::string name,
                  master::Tier tier);
  // Mounts segments_[i] (its id must be 0 already).
  Status MountOne(size_t i);
  void UnmountAll();

  StoreNodeOptions options_;
  transfer::CapabilitySigner signer_;
  transfer::TransferMetrics transfer_metrics_;  // before the servers: outlives them
  transfer::ClockGate clock_gate_;              // before the segments: outlives them
  bool clock_refused_ = false;                  // the gate was closed at the last heartbeat
  std::vector<Segment> segments_;  // [0] DRAM; fixed after Start
  std::unique_ptr<transfer::PageWarmer> warmer_;  // after segments_: destroyed first
  std::unique_ptr<transfer::TcpDataServer> tcp_;
  std::unique_ptr<transfer::ShmServer> shm_;
  std::unique_ptr<rpc::MasterClient> master_;
  Endpoint base_endpoint_;  // host, port and shm name; the epoch is per mount

  // Guards stop_, beat_now_, remounts_ and each Segment's mount fields; cv_
  // wakes the heartbeat thread.
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool beat_now_ = false;  // another master leads: a heartbeat now (OnLeaderChange)
  uint64_t remounts_ = 0;
  std::thread heartbeat_;
};

}  // namespace crescent::store
