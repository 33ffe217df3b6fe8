// The long-running subcommands: `crescent master` (metadata only), `crescent
// store` (one store node), and `crescent serve` (both in one process, the
// embedded default that `make run` starts). Each prints where it listens, then
// runs until SIGINT/SIGTERM and shuts down cleanly (a store node unmounts).
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <mutex>
#include <optional>
#include <thread>

#include "auth/token_file.h"
#include "cli/cli_util.h"
#include "cli/client_flags.h"
#include "cli/command.h"
#include "cli/master_flags.h"
#include "cli/server_auth.h"
#include "cli/tls_flags.h"
#include "metrics/admin_http.h"
#include "server/master_host.h"
#include "store/store_node.h"
#include "transfer/capability.h"
#include "transfer/congestion.h"

namespace crescent::cli {
namespace {

struct StoreFlags {
  store::StoreNodeOptions node;
  std::string segment_size = "1GiB";
  std::vector<std::string> pmem;  // PATH:SIZE each
  bool no_shm = false;
  bool no_warm_pages = false;
  int http_port = 0;  // standalone only: the node's own /metrics (serve shares the master's)
  PortLimitFlags port_limits;  // standalone only (serve takes the master's)

  void Add(CLI::App& app, bool standalone) {
    app.add_option("--segment-size", segment_size,
                   std::string("DRAM segment size, e.g. 512MiB or 4G") + kSizeHelp)
        ->capture_default_str()
        ->check(ByteSizeCheck());
    app.add_option("--pmem", pmem,
                   "A persistent segment: PATH:SIZE, a file (created when missing; on a DAX "
                   "file system or an ordinary one) of SIZE bytes, e.g. /mnt/pmem/c.seg:64GiB. "
                   "Repeatable. New objects go to DRAM first; the file's objects survive a "
                   "restart of the node (docs/persistent-tier.md)")
        ->type_name("PATH:SIZE");
    app.add_option("--node-id", node.node_id, "Store node id (default HOSTNAME-PID)");
    app.add_option("--segment-name", node.segment_name, "Segment name (default NODE_ID/dram0)");
    app.add_option("--data-port", node.port, "TCP data port (0: any free port)")
        ->capture_default_str();
    app.add_option("--data-threads", node.io_threads,
                   "Threads serving the TCP data port (each owns its connections)")
        ->capture_default_str()
        ->check(CLI::Range(1, 64));
    app.add_option("--tcp-congestion", node.tcp_congestion,
                   "TCP congestion control of accepted data connections (e.g. cubic, reno; "
                   "default: the system's)");
    app.add_flag("--no-shm", no_shm, "Do not offer shared memory to same-host clients");
    app.add_flag("--no-warm-pages", no_warm_pages,
                 "Do not touch the segment's pages in the background after start (on VMs "
                 "with shadow paging, the first transfers then pay a trap per page)");
    app.add_option("--advertise-host", node.advertise_host,
                   "Address clients are told to reach the data port at (default: --host; "
                   "required when --host is 0.0.0.0 or ::)");
    if (standalone) {
      app.add_option("--host", node.host,
                     "Address the data port listens on (advertised too, unless --advertise-host)")
          ->capture_default_str();
      app.add_option("--http-port", http_port,
                     "Admin HTTP port for the node's /metrics and /health, on --host (0: off)")
          ->capture_default_str()
          ->check(CLI::Range(0, 65535));
      port_limits.Add(app, "the data port");
      app.add_option("--heartbeat-interval-ms", node.heartbeat_interval_ms,
                     "Heartbeat period (keep it well below the master's TTL)")
          ->capture_default_str()
          ->check(CLI::Range(int64_t{10}, int64_t{3'600'000}));
    }
  }

  Status Finish() {
    StatusOr<uint64_t> size = ParseByteSize(segment_size);
    if (!size.ok()) return size.status();
    node.segment_size = size.value();
    for (const std::string& spec : pmem) {
      const size_t colon = spec.rfind(':');
      if (colon == std::string::npos || colon == 0) {
        return Status(ErrorCode::kInvalidArgument,
                      "--pmem '" + spec + "': expected PATH:SIZE, e.g. /mnt/pmem/c.seg:8GiB");
      }
      StatusOr<uint64_t> file_size = ParseByteSize(spec.substr(colon + 1));
      if (!file_size.ok()) {
        return Status(file_size.status().code(),
                      "--pmem '" + spec + "': " + file_size.status().message());
      }
      node.persistent.push_back({spec.substr(0, colon), file_size.value()});
    }
    node.shared_memory = !no_shm;
    node.limits = port_limits.ToLimits();
    node.warm_pages = !no_warm_pages;
    if (Status s = transfer::CheckCongestionControl(node.tcp_congestion); !s.ok()) {
      return Status(s.code(), "--tcp-congestion: " + s.message());
    }
    return Status::Ok();
  }
};

std::string DescribeNode(store::StoreNode& node) {
  std::string out = "store node " + node.node_id() + ": segment " + node.segment_name() + " (" +
                    FormatBytes(node.segment_size()) + ") at " + node.endpoint() + "\n";
  for (size_t i = 1; i < node.segment_count(); ++i) {
    const transfer::PmemFile* file = node.segment_memory(i).persistent();
    out += "  persistent segment " + node.segment_name(i) + " (" +
           FormatBytes(node.segment_memory(i).size()) + ", " + file->path() +
           (file->created() ? ", new" : "") + ")\n";
  }
  return out;
}

// The auth file `flags` names (none: no ServerAuth), its credentials given to
// the master in `options`; `internal_node`: with a node token of this process's own.
StatusOr<std::unique_ptr<ServerAuth>> LoadServerAuth(const MasterFlags& flags, bool internal_node,
                                                     server::MasterHostOptions* options) {
  if (flags.auth_file.empty()) return std::unique_ptr<ServerAuth>();
  StatusOr<std::unique_ptr<ServerAuth>> loaded = ServerAuth::Load(flags.auth_file, internal_node);
  if (loaded.ok()) options->rpc.credentials = (*loaded)->credentials();
  return loaded;
}

void WarnIfExposed(const char* verb, const MasterFlags& flags) {
  if (std::string w = flags.ExposureWarning(); !w.empty()) {
    std::cerr << "crescent " << verb << ": warning: " << w << "\n" << std::flush;
  }
}

// What WaitForShutdownSignal runs on SIGHUP: with an auth file, read it again
// and hand the host the new credentials; without one, nothing (SIGHUP is then
// not caught).
std::function<void()> ReloadOnHangup(const char* verb, ServerAuth* auth, server::MasterHost& host) {
  if (auth == nullptr) return {};
  return [verb, auth, &host] {
    auth->Reload(verb, [&host](ServerAuth::Credentials c) { host.SetCredentials(std::move(c)); });
  };
}

// `crescent master --etcd`: a master of a cluster (docs/ha.md). It starts as
// a standby (MasterHost::Start returns once it leads), so Start runs on a
// thread of its own while this one waits for signals: SIGINT/SIGTERM end the
// standby's wait too. A leader that loses its leadership runs itself again,
// with the same arguments: a standby, which follows the new leader's log.
int RunClusterMaster(server::MasterHostOptions options, const std::string& secret,
                     ServerAuth* auth) {
  std::mutex mu;  // guards the four below
  server::HaMember* standby = nullptr;
  std::unique_ptr<server::MasterHost> host;
  std::optional<ServerAuth::Credentials> reloaded;  // a SIGHUP's, before it leads
  bool stopping = false, failed = false;
  const std::string cluster = options.ha.cluster;
  options.on_standby = [&](server::HaMember& m) {
    std::lock_guard lock(mu);
    standby = &m;
    if (stopping) m.Cancel();
    std::cout << "crescent master: standby of cluster " << cluster << " (etcd "
              << options.ha.etcd << "), following its log\n"
              << std::flush;
  };
  options.on_deposed = [cluster] {
    std::cout << "crescent master: lost the leadership of cluster " << cluster
              << ": starting again as a standby\n"
              << std::flush;
    Status s = ExecSelfAgain();
    std::cerr << "crescent master: " << s.ToString() << "\n" << std::flush;
    std::_Exit(2);
  };
  std::thread starter([&] {
    auto started = server::MasterHost::Start(options, secret);
    std::lock_guard lock(mu);
    standby = nullptr;
    if (!started.ok() && started.status().code() == ErrorCode::kObjectNotFound && !stopping) {
      // The log was trimmed past this master's state while it followed it:
      // a fresh start bootstraps from the leader's snapshot.
      std::cout << "crescent master: " << started.status().message() << ": starting again\n"
                << std::flush;
      std::this_thread::sleep_for(std::chrono::seconds(1));
      Status s = ExecSelfAgain();
      std::cerr << "crescent master: " << s.ToString() << "\n" << std::flush;
      std::_Exit(2);
    }
    if (!started.ok()) {
      if (!stopping) failed = Report("master", started.status()) != 0;
      ::kill(::getpid(), SIGTERM);  // wakes the wait below
      return;
    }
    host = std::move(started).value();
    if (reloaded) host->SetCredentials(std::move(*reloaded));
    std::cout << "crescent master: " << host->Describe()
              << (auth ? auth->Describe() : std::string()) << "ready\n"
              << std::flush;
  });
  std::function<void()> on_hangup;
  if (auth != nullptr) {
    on_hangup = [&] {
      auth->Reload("master", [&](ServerAuth::Credentials c) {
        std::lock_guard lock(mu);
        if (host) {
          host->SetCredentials(std::move(c));
        } else {
          reloaded = std::move(c);
        }
      });
    };
  }
  const int sig = WaitForShutdownSignal(on_hangup);
  {
    std::lock_guard lock(mu);
    stopping = true;
    if (standby) standby->Cancel();
  }
  starter.join();
  if (failed) return 2;
  std::cout << "crescent master: signal " << sig << ", shutting down\n" << std::flush;
  host.reset();
  return 0;
}

void AddMaster(CLI::App& root) {
  auto* app = root.add_subcommand("master", "Run the master (metadata service) alone");
  auto flags = std::make_shared<MasterFlags>();
  auto secret_file = std::make_shared<std::string>();
  flags->Add(*app);
  app->add_option("--secret-file", *secret_file,
                  "Cluster secret shared with the store nodes (or $CRESCENT_SECRET_FILE, "
                  "$CRESCENT_SECRET)");
  auto ha = std::make_shared<server::HaOptions>();
  app->add_option("--etcd", ha->etcd,
                  "Run as one master of a cluster on etcd (docs/ha.md): its endpoints, "
                  "http://H1:2379,http://H2:2379; the log is kept there, and a --data-dir "
                  "holds this master's snapshots (the log is trimmed before what every "
                  "member holds)");
  app->add_option("--cluster", ha->cluster, "The cluster's name (with --etcd)")
      ->capture_default_str();
  app->add_option("--leader-ttl-ms", ha->leader_ttl_ms,
                  "The leader's lease in etcd: a leader that cannot renew it within this "
                  "stops acknowledging, and a standby takes over after it (etcd rounds it up "
                  "to whole seconds)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1000}, int64_t{600'000}));
  app->add_option("--log-in-flight", ha->log_in_flight,
                  "With --etcd: the leader's log batches whose transactions may be under way "
                  "at once (each compares that the one before it is there, so none commits "
                  "ahead of a gap)")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  auto token_file = std::make_shared<std::string>();
  app->add_option("--token-file", *token_file,
                  "With --etcd: an admin token (NAME:SECRET) this master reads its leader's "
                  "snapshots with, where the leader has an auth file (default: "
                  "$CRESCENT_TOKEN; docs/ha.md)");
  app->callback([app, flags, secret_file, ha, token_file] {
    if (Status s = flags->CheckExposure(); !s.ok()) return SetExitCode(Report("master", s));
    if (Status s = flags->CheckRestoreGrace(ha->enabled()); !s.ok()) {
      return SetExitCode(Report("master", s));
    }
    StatusOr<std::string> secret = transfer::LoadClusterSecret(*secret_file);
    if (!secret.ok()) return SetExitCode(Report("master", secret.status()));
    server::MasterHostOptions options = flags->ToOptions();
    auto loaded = LoadServerAuth(*flags, /*internal_node=*/false, &options);
    if (!loaded.ok()) return SetExitCode(Report("master", loaded.status()));
    std::unique_ptr<ServerAuth> auth = std::move(loaded).value();
    WarnIfExposed("master", *flags);
    BlockShutdownSignals(/*hangup=*/auth != nullptr);
    if (ha->enabled() || !ha->cluster.empty() || app->count("--log-in-flight") > 0) {
      if (!ha->enabled()) {
        return SetExitCode(Report(
            "master",
            Status(ErrorCode::kInvalidArgument, ha->cluster.empty() ? "--log-in-flight needs --etcd"
                                                                    : "--cluster needs --etcd")));
      }
      if (app->count("--log-sync") > 0) {
        return SetExitCode(Report("master", Status(ErrorCode::kInvalidArgument,
                                                   "--log-sync with --etcd: a cluster's log is "
                                                   "acknowledged once etcd committed it")));
      }
      StatusOr<std::string> token = auth::LoadClientToken(*token_file);
      if (!token.ok()) return SetExitCode(Report("master", token.status()));
      options.ha = *ha;
      // The client to the leader (a bootstrap, a standby's copies of its
      // snapshots): this master's token, and its TLS files for the leader's
      // certificate (its CA, else the certificate itself) and mutual TLS.
      rpc::MasterClientOptions& leader = options.ha.snapshots.leader;
      leader.token = std::move(*token);
      if (!options.rpc.tls.cert.empty()) {
        leader.tls = options.rpc.tls;
        if (leader.tls.ca.empty()) leader.tls.ca = leader.tls.cert;
      }
      return SetExitCode(RunClusterMaster(std::move(options), secret.value(), auth.get()));
    }
    auto host = server::MasterHost::Start(options, secret.value());
    if (!host.ok()) return SetExitCode(Report("master", host.status()));
    std::cout << "crescent master: " << host.value()->Describe()
              << (auth ? auth->Describe() : std::string()) << "ready\n"
              << std::flush;
    int sig = WaitForShutdownSignal(ReloadOnHangup("master", auth.get(), *host.value()));
    std::cout << "crescent master: signal " << sig << ", shutting down\n" << std::flush;
    host.value().reset();
    SetExitCode(0);
  });
}

void AddStore(CLI::App& root) {
  auto* app = root.add_subcommand(
      "store", "Run a store node that contributes a DRAM segment (and persistent ones, --pmem)");
  auto flags = std::make_shared<StoreFlags>();
  auto secret_file = std::make_shared<std::string>();
  auto master = std::make_shared<std::string>();
  flags->Add(*app, true);
  app->add_option("--master", *master,
                  "Master address host:port or unix:PATH, or etcd://H1:2379,H2:2379/NAME to "
                  "follow cluster NAME's leader, mounting again on each new one (default "
                  "$CRESCENT_MASTER or 127.0.0.1:50051)");
  app->add_option("--secret-file", *secret_file,
                  "Cluster secret shared with the master (or $CRESCENT_SECRET_FILE, "
                  "$CRESCENT_SECRET)");
  auto token_file = std::make_shared<std::string>();
  AddTokenFileFlag(*app, *token_file);
  AddClientTlsFlags(*app, flags->node.master.tls);
  app->callback([flags, secret_file, master, token_file] {
    if (Status s = flags->Finish(); !s.ok()) return SetExitCode(Report("store", s));
    StatusOr<std::string> secret = transfer::LoadClusterSecret(*secret_file);
    if (!secret.ok()) return SetExitCode(Report("store", secret.status()));
    StatusOr<std::string> token = auth::LoadClientToken(*token_file);
    if (!token.ok()) return SetExitCode(Report("store", token.status()));
    flags->node.master.address = *master;
    flags->node.master.token = std::move(*token);
    BlockShutdownSignals();
    auto node = store::StoreNode::Start(flags->node, secret.value());
    if (!node.ok()) return SetExitCode(Report("store", node.status()));
    std::unique_ptr<metrics::AdminHttpServer> http;
    if (flags->http_port != 0) {
      const store::StoreNode* n = node.value().get();
      metrics::AdminRoutes routes;
      routes.metrics = [n] {
        metrics::TextWriter w;
        n->CollectMetrics(w);
        return w.Take();
      };
      routes.not_ready_reason = [n] {
        return n->segment_id() != 0 ? std::string() : std::string("the segment is not mounted");
      };
      auto started = metrics::AdminHttpServer::Start(flags->node.host, flags->http_port, routes);
      if (!started.ok()) return SetExitCode(Report("store", started.status()));
      http = std::move(started.value());
    }
    std::cout << "crescent store: " << DescribeNode(*node.value()) << "mounted on master "
              << rpc::ResolveMasterAddress(*master) << "\n";
    if (http) {
      std::cout << "metrics on http://"
                << HostPort(flags->node.host, static_cast<uint16_t>(http->port())) << "/metrics\n";
    }
    std::cout << "ready\n" << std::flush;
    int sig = WaitForShutdownSignal();
    std::cout << "crescent store: signal " << sig << ", unmounting\n" << std::flush;
    http.reset();
    node.value()->Stop();
    SetExitCode(0);
  });
}

// Under TLS, `serve`'s own node reaches its master through the Unix sockets,
// which serve no TLS (it holds no certificate the master would trust): those
// not given are made in a private directory (mode 0700), named in *dir for
// removal at exit. Returns the node's master address.
StatusOr<std::string> LocalSocketsForNode(server::MasterHostOptions& options, std::string* dir) {
  rpc::MasterServerOptions& rpc = options.rpc;
  const bool need_control = rpc.control_port >= 0 && rpc.control_socket.empty();
  if (rpc.unix_socket.empty() || need_control) {
    const char* tmp = std::getenv("TMPDIR");
    std::string made =
        std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/crescent-serve-XXXXXX";
    if (::mkdtemp(made.data()) == nullptr) {
      return Status(ErrorCode::kIoError, "cannot make a directory for the node's Unix sockets (" +
                                             made + "): " + std::strerror(errno));
    }
    *dir = made;
    if (rpc.unix_socket.empty()) rpc.unix_socket = made + "/grpc.sock";
    if (need_control) rpc.control_socket = made + "/control.sock";
  }
  return "unix:" + rpc.unix_socket;
}

// `serve`'s cluster secret: the one named (--secret-file, $CRESCENT_SECRET_FILE or
// $CRESCENT_SECRET), so that other processes holding it (a Python client that
// contributes a segment, another `crescent store`) can mount segments; with
// none named, a fresh random one that only this process's own node holds.
StatusOr<std::string> ServeSecret(const std::string& secret_file) {
  const auto set = [](const char* name) {
    const char* v = std::getenv(name);
    return v != nullptr && *v != '\0';
  };
  if (secret_file.empty() && !set("CRESCENT_SECRET_FILE") && !set("CRESCENT_SECRET")) {
    return transfer::RandomSecret();
  }
  return transfer::LoadClusterSecret(secret_file);
}

constexpr int64_t kServeCapabilityGraceMs = 50;

void AddServe(CLI::App& root) {
  auto* app = root.add_subcommand(
      "serve", "Run a master and one store node in one process (the embedded default)");
  auto mflags = std::make_shared<MasterFlags>();
  // The grace is the clock skew allowed between the master and a store node
  // (docs/capabilities.md, "Clock skew"): serve's own node reads this host's
  // clock, so it needs none, and a node that joins with a clock further off
  // refuses capabilities. A long grace only holds evicted space: a cache that
  // turns over faster than it runs short of room (docs/replay.md).
  mflags->config.capability_grace_ms = kServeCapabilityGraceMs;
  auto sflags = std::make_shared<StoreFlags>();
  auto secret_file = std::make_shared<std::string>();
  mflags->Add(*app);
  sflags->Add(*app, false);
  app->add_option("--secret-file", *secret_file,
                  "Cluster secret, for clients that contribute memory (or "
                  "$CRESCENT_SECRET_FILE, $CRESCENT_SECRET); none: a random one, and only "
                  "this process's own node can join");
  app->callback([mflags, sflags, secret_file] {
    if (Status s = mflags->CheckExposure(); !s.ok()) return SetExitCode(Report("serve", s));
    if (Status s = mflags->CheckRestoreGrace(false); !s.ok()) {
      return SetExitCode(Report("serve", s));
    }
    if (Status s = sflags->Finish(); !s.ok()) return SetExitCode(Report("serve", s));
    WarnIfExposed("serve", *mflags);
    StatusOr<std::string> secret = ServeSecret(*secret_file);
    if (!secret.ok()) return SetExitCode(Report("serve", secret.status()));
    server::MasterHostOptions options = mflags->ToOptions();
    // With an auth file, the node authenticates too: with a node token of its
    // own, which only this process holds (never written to the file).
    auto loaded = LoadServerAuth(*mflags, /*internal_node=*/true, &options);
    if (!loaded.ok()) return SetExitCode(Report("serve", loaded.status()));
    std::unique_ptr<ServerAuth> auth = std::move(loaded).value();
    if (auth) sflags->node.master.token = auth->internal_token();
    // Made for the node under TLS, removed once the servers (declared after
    // it) have gone and taken their sockets with them.
    struct RemovedAtExit {
      std::string dir;
      ~RemovedAtExit() {
        if (!dir.empty()) ::rmdir(dir.c_str());
      }
    } socket_dir;
    std::string node_master;
    if (!options.rpc.tls.cert.empty()) {
      StatusOr<std::string> local = LocalSocketsForNode(options, &socket_dir.dir);
      if (!local.ok()) return SetExitCode(Report("serve", local.status()));
      node_master = *local;
      sflags->node.master.liveness = false;
    }
    BlockShutdownSignals(/*hangup=*/auth != nullptr);
    auto host = server::MasterHost::Start(options, *secret);
    if (!host.ok()) return SetExitCode(Report("serve", host.status()));
    sflags->node.host = mflags->host;
    sflags->node.limits = mflags->port_limits.ToLimits();
    sflags->node.master.address = node_master.empty() ? host.value()->address() : node_master;
    auto node = store::StoreNode::Start(sflags->node, *secret);
    if (!node.ok()) return SetExitCode(Report("serve", node.status()));
    // The node's families join the master's /metrics.
    const uint64_t node_metrics = host.value()->metrics_registry().Add(
        [n = node.value().get()](metrics::TextWriter& w) { n->CollectMetrics(w); });
    std::cout << "crescent serve: " << host.value()->Describe() << DescribeNode(*node.value())
              << (auth ? auth->Describe() : std::string()) << "ready (Ctrl-C to stop)\n"
              << std::flush;
    int sig = WaitForShutdownSignal(ReloadOnHangup("serve", auth.get(), *host.value()));
    std::cout << "crescent serve: signal " << sig << ", shutting down\n" << std::flush;
    // Clients first: from here on they get UNAVAILABLE (retryable), never the
    // teardown below (the segment unmounting, its pending puts dropped).
    host.value()->BeginDrain();
    host.value()->metrics_registry().Remove(node_metrics);
    node.value()->Stop();
    // The node's connection to the master goes first: an open channel would
    // hold the master server's shutdown for its whole grace period.
    node.value().reset();
    host.value().reset();
    SetExitCode(0);
  });
}

Registrar master_registrar(AddMaster);
Registrar store_registrar(AddStore);
Registrar serve_registrar(AddServe);

}  // namespace
}  // namespace crescent::cli
