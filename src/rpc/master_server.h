// MasterServer: the gRPC front of a MasterService (master.proto), an async server
// whose completion queues are drained by `threads` threads. It listens on TCP and,
// optionally, on a Unix socket for same-host clients. Store nodes' heartbeats
// have a server of their own beside it (the Liveness service): its own port,
// connections and thread, so that a slow call never makes a healthy node miss
// its heartbeat TTL.
//
// Every request is validated here before it reaches the engine (key and batch
// sizes, counts that must match, enum ranges, TTL signs), and every replica the
// engine returns leaves with a capability signed for it: read capabilities expire
// with the read lease, write capabilities with the put timeout.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "auth/handshake.h"
#include "crescent/status.h"
#include "master/master_service.h"
#include "rpc/batch_parts.h"
#include "rpc/drain_state.h"
#include "rpc/snapshot_part.h"
#include "rpc/tls.h"
#include "transfer/capability.h"
#include "transfer/connection_limits.h"

namespace crescent::proto {
class ClusterStatus;
}  // namespace crescent::proto

namespace crescent::rpc {

class RpcServerMetrics;

struct MasterServerOptions {
  std::string listen_address = "127.0.0.1:50051";  // host:port; port 0 picks one
  std::string unix_socket;                          // path; empty: none
  // Completion-queue threads. One is fastest on small machines: with gRPC's
  // poll poller (grpc_setup.h) every thread polls every connection, and on
  // 2 vCPUs a second thread cut BatchQueryPrefix(128) throughput from 4
  // client threads by about a third (~1.7-2.0M vs ~1.2M keys/s in
  // `crescent bench prefix --batch 128 --miss 0 --clients 4`).
  int threads = 1;
  uint32_t max_batch = 1 << 16;       // keys per batch call
  uint32_t max_list = 1 << 20;        // keys per List reply (and what fits the message limit)
  uint32_t max_replicas = kDefaultMaxReplicas;  // PutConfig.replica_count ceiling
  int max_message_bytes = 64 << 20;   // gRPC receive/send limit
  // Asks for a snapshot and returns at once (the Snapshot RPC); empty: the
  // master keeps none (no --data-dir), and the RPC answers UNSUPPORTED.
  std::function<void()> request_snapshot;
  // Reads a part of a snapshot file (the ReadSnapshot RPC): the snapshot at
  // `position` (0: the newest), from `offset`, at most `max_bytes`; empty: the
  // master keeps none, and the RPC answers UNSUPPORTED.
  std::function<StatusOr<SnapshotPart>(uint64_t position, uint64_t offset, uint32_t max_bytes)>
      read_snapshot;
  // A master of a cluster on etcd (docs/ha.md): fills the Stats RPC's cluster
  // section; empty: a single master, and Stats has none.
  std::function<void(proto::ClusterStatus*)> cluster_status;
  // The lean control protocol (control_server.h, docs/control-plane.md) for the hot
  // calls: a TCP port on the listen address's host (0: any free port; -1:
  // none), and a Unix socket for clients on this host (empty: none). Clients
  // find both through the ControlEndpoints RPC.
  int control_port = 0;
  std::string control_socket;
  // The Liveness service's TCP port on the listen address's host (0: any
  // free port; -1: none, and nodes' heartbeats share the threads above).
  // Nodes find it through the ControlEndpoints RPC.
  int liveness_port = 0;
  // Acknowledgements wait for the operation log's sync (--log-sync always):
  // the lean protocol answers puts' ends on workers, not its I/O thread.
  bool acks_wait_for_sync = false;
  // The lean protocol's threads poll their connections at least this long
  // after each answer before they sleep, stretched up to control_spin_max_us
  // to cover a client's gaps between calls (ControlServerOptions); 0: never.
  int control_spin_us = 200;
  int control_spin_max_us = 1000;
  // The lean control port's and socket's connection cap and idle timeout
  // (control_server.h); the idle timeout also closes idle gRPC connections
  // (gRPC's max_connection_idle: its clients reconnect on their next call).
  transfer::ConnectionLimits limits;
  // Time every call and count its reply's errors (server_metrics.h). Off
  // only to measure what that costs (`crescent bench --no-rpc-metrics`).
  bool record_metrics = true;
  // Set: lean control connections authenticate before any call (ControlServerOptions,
  // docs/security.md), and gRPC, which carries no credential yet, answers every
  // call but ControlEndpoints UNAUTHENTICATED (the Liveness service's heartbeats
  // included): authenticated clients send every call over the lean protocol
  // (ControlMethod::kCall). Needs control_port >= 0.
  std::shared_ptr<const auth::ServerCredentials> credentials;
  // TLS (rpc/tls.h, docs/security.md): with `cert` and `key`, the gRPC port,
  // the Liveness port and the lean control port serve TLS only, and with `ca`
  // too they require client certificates it signed (mutual TLS). The Unix
  // sockets stay plain. Start refuses files that cannot be read or do not
  // parse, and a key that is not the certificate's (kInvalidArgument).
  TlsFiles tls;
};

class MasterServer {
 public:
  // `master` and `signer` must outlive the server.
  static StatusOr<std::unique_ptr<MasterServer>> Start(const MasterServerOptions& options,
                                                       master::MasterService& master,
                                                       const transfer::CapabilitySigner& signer);
  ~MasterServer();  // Shutdown()s
  // The bound TCP port (useful with port 0).
  int port() const;
  // The lean control protocol's bound TCP port; 0 when it is off.
  int control_port() const;
  // The Liveness service's bound TCP port; 0 when it is off.
  int liveness_port() const;
  // The admin HTTP port that Stats replies name (MasterHost sets it once its
  // endpoint is up); 0 until then, or without one.
  void SetAdminPort(int port);
  // Replaces the lean protocol's credentials (ControlServer::SetCredentials);
  // null turns authentication off, gRPC's refusals included.
  void SetCredentials(std::shared_ptr<const auth::ServerCredentials> credentials);
  // Latency and errors by method, object sizes (server_metrics.h).
  const RpcServerMetrics& metrics() const;
  // From now on, answers every client call with gRPC UNAVAILABLE (`why`), which clients retry; a
  // store node's unmount and heartbeats, ListSegments and Stats are still served. Called first when
  // a process that hosts the master stops, so that clients of a stopping server never read its
  // teardown (segments unmounting, puts dropped) as answers.
  void BeginDrain(std::string why = kShuttingDown);
  // Drains, stops accepting, finishes in-flight calls, joins the threads.
  // Idempotent.
  void Shutdown();

 private:
  struct Impl;
  explicit MasterServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace crescent::rpc
