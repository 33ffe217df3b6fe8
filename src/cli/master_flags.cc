#include "cli/master_flags.h"

#include "cache/eviction_policy.h"
#include "cli/cli_util.h"
#include "cli/tls_flags.h"
#include "common/listen_check.h"

namespace crescent::cli {

void MasterFlags::Add(CLI::App& app) {
  AddServingFlags(app);
  AddEngineFlags(app);
  AddDurabilityFlags(app);
  AddTierFlags(app);
  app.add_option("--bloom-expected-keys", config.bloom_expected_keys,
                 "Design load of the negative-lookup filter (it grows when outgrown)")
      ->capture_default_str()
      ->check(CountCheck());
  app.add_option("--auth-file", auth_file,
                 "Authenticate every client with the tokens of this auth file (crescent token "
                 "add; mode 0600), read again on SIGHUP; gRPC, which carries no token, then "
                 "answers only ControlEndpoints (docs/security.md)");
  AddServerTlsFlags(app, server.tls);
}

Status MasterFlags::CheckRestoreGrace(bool cluster) const {
  if (restore_grace_ms >= 0 && data_dir.empty() && !cluster) {
    return Status(ErrorCode::kInvalidArgument,
                  "--restore-grace requires --data-dir (or --etcd, a cluster's master): nothing else is restored");
  }
  return Status::Ok();
}

Status MasterFlags::CheckExposure() const {
  if (!auth_file.empty() || insecure || IsLoopbackHost(host)) return Status::Ok();
  return Status(ErrorCode::kInvalidArgument,
                "--host " + host +
                    " is not a loopback address, and without an auth file anyone who reaches "
                    "it may read, overwrite and remove every key and mount segments: listen on "
                    "loopback (the default, 127.0.0.1), or pass --insecure to serve without "
                    "authentication on a network you trust (docs/security.md)");
}

std::string MasterFlags::ExposureWarning() const {
  if (!auth_file.empty() || IsLoopbackHost(host)) return "";
  return "serving on " + host +
         " without authentication (--insecure): anyone who reaches its ports may read, "
         "overwrite and remove every key and mount segments";
}

void MasterFlags::AddServingFlags(CLI::App& app) {
  app.add_option("--host", host,
                 "Address to listen on (gRPC, the lean control protocol, heartbeats; under serve, "
                 "the data port too). Other than loopback, it needs an auth file or --insecure")
      ->capture_default_str();
  app.add_flag("--insecure", insecure,
               "Allow a --host other than loopback without an auth file: anyone who reaches the "
               "ports may then read, overwrite and remove every key and mount segments "
               "(docs/security.md)");
  app.add_option("--port", port, "gRPC port")->capture_default_str()->check(CLI::Range(0, 65535));
  app.add_option("--http-host", http_host,
                 "Address the admin HTTP port listens on (it serves read-only pages)")
      ->capture_default_str();
  app.add_option("--http-port", http_port,
                 "Admin HTTP port: the status page (/), /metrics, /api/status, /health (0: off)")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  app.add_option("--unix-socket", server.unix_socket,
                 "Also serve gRPC on this Unix socket path (clients: --master unix:PATH)");
  app.add_option("--control-port", server.control_port,
                 "TCP port of the lean control protocol, which carries the hot calls (exists, "
                 "prefix queries, replica lists, puts' start and end) on kept connections; "
                 "clients find it through gRPC (0: any free port; -1: off, everything over gRPC; "
                 "docs/control-plane.md)")
      ->capture_default_str()
      ->check(CLI::Range(-1, 65535));
  app.add_option("--control-spin-us", server.control_spin_us,
                 "After answering lean control calls, poll the connections at least this long for "
                 "the next ones before sleeping (0: never; waking a thread costs more than a call "
                 "on VMs)")
      ->capture_default_str()
      ->check(CLI::Range(0, 10000));
  app.add_option("--control-spin-max-us", server.control_spin_max_us,
                 "Stretch that poll up to this long when the gaps between a client's calls are "
                 "longer (a same-host get copying megabytes between them); a longer gap sets it "
                 "back (docs/control-plane.md)")
      ->capture_default_str()
      ->check(CLI::Range(0, 100000));
  app.add_option("--control-socket", server.control_socket,
                 "Also serve the lean control protocol on this Unix socket path, which clients "
                 "on this host then use instead of TCP");
  app.add_option("--liveness-port", server.liveness_port,
                 "TCP port on which store nodes' heartbeats are served, by a thread of their "
                 "own, so that no slow call delays them; nodes find it through gRPC (0: any "
                 "free port; -1: off, heartbeats share the gRPC threads; docs/control-plane.md)")
      ->capture_default_str()
      ->check(CLI::Range(-1, 65535));
  port_limits.Add(app, "the lean control port and socket; under serve, the data port too");
  app.add_option("--rpc-threads", server.threads,
                 "gRPC and lean control server threads (1 is fastest on few cores)")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
}

void MasterFlags::AddEngineFlags(CLI::App& app) {
  app.add_option("--eviction-policy", config.eviction_policy,
                 "Eviction policy (adaptive: learns online which pages to keep; "
                 "docs/adaptive.md)")
      ->capture_default_str()
      ->check(CLI::IsMember(cache::PolicyNames()));
  app.add_option("--lease-ms", config.lease_ms,
                 "Read lease granted by a get, plus the size term below: the read capability "
                 "lives as long, and a leased object is neither evicted nor removed without "
                 "--force. It need only cover one transfer; longer pins objects readers already "
                 "have and starves writers of space")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{86'400'000}));
  app.add_option("--lease-bytes-per-ms", config.lease_bytes_per_ms,
                 "A get's lease grows by 1 ms per this many bytes of the object (the slowest "
                 "transfer rate it covers; 0: no size term)")
      ->capture_default_str()
      ->check(CountCheck());
  app.add_option("--put-timeout-ms", config.put_timeout_ms,
                 "An unfinished put is discarded after this long")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{86'400'000}));
  app.add_option("--capability-grace-ms", config.capability_grace_ms,
                 "Freed space waits this long past the last capability that could reach it "
                 "(the clock skew allowed between master and store nodes: a node whose "
                 "clock is off by more refuses capabilities)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{3'600'000}));
  app.add_option("--put-wait-for-held-ms", config.put_wait_for_held_ms,
                 "A put that finds no room, when every victim was read within its lease and "
                 "the grace (evicting one only holds its space), waits up to this long for "
                 "held space to come free instead of answering NO_SPACE. 0: never waits")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{60'000}));
  app.add_option("--location-cache-capability-ms", config.location_cache_capability_ms,
                 "The longest a read capability lives when a client asks for one for its "
                 "location cache (gets served without asking the master). Nothing holds the "
                 "space for it: a read through it after the space went to another object "
                 "fails the reader's checksum. 0: never longer than the lease "
                 "(docs/capabilities.md)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{3'600'000}));
  app.add_option("--heartbeat-ttl-ms", config.heartbeat_ttl_ms,
                 "A store node silent this long is dropped with its segments")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{86'400'000}));
  app.add_option("--max-segment-size", max_segment_size,
                 std::string("Refuse to mount a segment larger than this (INVALID_ARGUMENT): "
                             "placement prefers free space, so a huge segment would draw most "
                             "puts") +
                     kSizeHelp)
      ->capture_default_str()
      ->check(ByteSizeCheck());
  app.add_option("--high-watermark", config.high_watermark, "Start evicting at this fill")
      ->capture_default_str()
      ->check(CLI::Range(0.01, 1.0));
  app.add_option("--evict-ratio", config.evict_ratio, "Fraction of capacity freed per round")
      ->capture_default_str()
      ->check(CLI::Range(0.001, 1.0));
  app.add_option("--max-key-length", config.max_key_length, "Longest accepted key in bytes")
      ->capture_default_str()
      ->check(CLI::Range(1u, master::kMaxKeyLengthLimit));
}

void MasterFlags::AddDurabilityFlags(CLI::App& app) {
  // The durability flags below mean nothing without --data-dir: each needs it
  // (CLI11 refuses "--log-sync requires --data-dir"), so that a master the
  // operator believes durable cannot start without a log.
  CLI::Option* dir = app.add_option(
      "--data-dir", data_dir,
      "Keep the operation log and snapshots of the metadata here: every put ended, "
      "remove, eviction, mount and unmount is logged before it is acknowledged. At "
      "start the newest valid snapshot and the log after it are restored; store nodes "
      "that kept their memory take their segments back with the objects in them "
      "(docs/durability.md)");
  app.add_option("--log-sync", log_sync,
                 "When the operation log reaches stable storage: 'always' (fdatasync before "
                 "each acknowledgement, group-committed; records no call waits for, such as "
                 "evictions and tier moves, are synced as soon as written) or every N ms (an "
                 "acknowledged change may be lost if the host fails within N ms). Mounts are "
                 "synced before they are answered either way")
      ->capture_default_str()
      ->check([](const std::string& v) -> std::string {
        if (v == "always") return {};
        if (!v.empty() && v.size() <= 7 && v.find_first_not_of("0123456789") == std::string::npos &&
            std::stoll(v) > 0) {
          return {};
        }
        return "must be 'always' or a period in ms (1..9999999)";
      })
      ->needs(dir);
  app.add_option("--snapshot-interval", snapshot_interval_s,
                 "With --data-dir: a snapshot of the metadata every this many seconds (0: only "
                 "at shutdown), taken while serving; the log before the oldest kept one is "
                 "dropped")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{86'400 * 365}))
      ->needs(dir);
  app.add_option("--snapshot-keep", snapshot_keep, "With --data-dir: snapshots kept, newest first")
      ->capture_default_str()
      ->check(CLI::Range(size_t{1}, size_t{1000}))
      ->needs(dir);
  app.add_flag("--allow-empty-restore", allow_empty_restore,
               "With --data-dir: when no snapshot reads back whole and the log does not reach "
               "back far enough (or is damaged), start empty instead of refusing to start")
      ->needs(dir);
  app.add_option("--restore-grace", restore_grace_ms,
                 "With --data-dir, or on a cluster's new leader (--etcd): ms a restored "
                 "segment waits for its store node to take it over before it is dropped with "
                 "its objects (default: --heartbeat-ttl-ms)")
      ->check(CLI::Range(int64_t{0}, int64_t{86'400'000}));
}

void MasterFlags::AddTierFlags(CLI::App& app) {
  app.add_option("--pmem-grace", config.pmem_grace_ms,
                 "ms a persistent segment whose node unmounted it or died (or that a restore "
                 "brought back) waits, with its objects, for a node to mount the same segment "
                 "(the same file) before it is dropped")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{30LL * 86'400'000}));
  app.add_option("--pmem-promote-hits", config.pmem_promote_hits,
                 "A persistent-tier object moves back to DRAM at this many reads within "
                 "--pmem-promote-window ms (1: at every read)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  app.add_option("--pmem-promote-keeps-copy", config.pmem_promote_keeps_copy,
                 "A promoted object keeps its persistent copy beside the DRAM one, so a read "
                 "never costs it its durability; false moves the only copy (about 0.025 more "
                 "hit ratio on the public trace with DRAM 5% and PMEM 20%, but a kill of the "
                 "node loses every promoted object)")
      ->capture_default_str();
  app.add_option("--pmem-promote-window", config.pmem_promote_window_ms,
                 "The window of --pmem-promote-hits, in ms (0: never promote)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{86'400'000}));
}

}  // namespace crescent::cli
