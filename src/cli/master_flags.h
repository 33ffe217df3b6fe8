// The master's command-line flags, shared by `crescent master` and `crescent
// serve` so both spell and document every option the same way.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "cli/cli_util.h"
#include "cli/port_limit_flags.h"
#include "common/endpoint.h"
#include "master/master_config.h"
#include "rpc/master_server.h"
#include "server/master_host.h"

namespace crescent::cli {

struct MasterFlags {
  master::MasterConfig config = [] {
    master::MasterConfig c;
    c.eviction_policy = kDefaultEvictionPolicy;
    c.put_wait_for_held_ms = 2'000;
    return c;
  }();
  rpc::MasterServerOptions server;
  std::string host = "127.0.0.1";
  int port = 50051;
  std::string http_host = "127.0.0.1";
  int http_port = 9003;  // 0: none
  // Listen on a --host other than loopback without an auth file
  // (CheckExposure).
  bool insecure = false;
  // The auth file (docs/security.md) that authenticates clients and nodes;
  // empty: none (read by `crescent master` and `serve`, and by CheckExposure).
  std::string auth_file;
  std::string data_dir;         // empty: no operation log
  std::string log_sync = "10";  // "always" or a period in ms
  int64_t snapshot_interval_s = 300;
  size_t snapshot_keep = 2;
  bool allow_empty_restore = false;
  int64_t restore_grace_ms = -1;  // -1: the heartbeat TTL
  std::string max_segment_size = "16TiB";  // config.max_segment_bytes (checked by Add())
  PortLimitFlags port_limits;     // the lean control port and socket (serve: the data port too)

  void Add(CLI::App& app);
  // Safe by default: without an auth file, a --host other than loopback
  // (IsLoopbackHost) is refused unless --insecure, kInvalidArgument saying
  // what to do.
  Status CheckExposure() const;
  // --restore-grace without --data-dir, on a master that is no cluster's
  // (`cluster`: --etcd), restores nothing: kInvalidArgument.
  Status CheckRestoreGrace(bool cluster) const;
  // What the server says on stderr at start when --insecure let it listen
  // beyond loopback; empty otherwise.
  std::string ExposureWarning() const;
  server::MasterHostOptions ToOptions() const {
    server::MasterHostOptions o;
    o.config = config;
    o.config.max_segment_bytes = ParseByteSize(max_segment_size).value();  // checked by Add()
    o.rpc = server;
    o.rpc.limits = port_limits.ToLimits();
    // An IPv6 address goes in brackets: gRPC would read "::1:50051" as an
    // address without a port.
    o.rpc.listen_address = HostPort(host, static_cast<uint16_t>(port));
    o.http_host = http_host;
    o.http_port = http_port;
    o.data_dir = data_dir;
    o.snapshot_interval_ms = snapshot_interval_s * 1000;
    o.snapshot_keep = snapshot_keep;
    o.allow_empty_restore = allow_empty_restore;
    o.restore_grace_ms = restore_grace_ms < 0 ? config.heartbeat_ttl_ms : restore_grace_ms;
    o.log_sync_ms = log_sync == "always" ? 0 : std::stoll(log_sync);  // checked by Add()
    return o;
  }

 private:
  // Where and how it serves: ports, sockets, the lean protocol, threads.
  void AddServingFlags(CLI::App& app);
  // The engine: eviction, leases, timeouts, limits.
  void AddEngineFlags(CLI::App& app);
  // --data-dir and what needs it.
  void AddDurabilityFlags(CLI::App& app);
  // The persistent tier: its grace and promotions.
  void AddTierFlags(CLI::App& app);
};

}  // namespace crescent::cli
