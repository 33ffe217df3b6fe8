// `crescent snapshot`: asks a master started with --data-dir for a snapshot
// of its metadata now (docs/durability.md), waits until it is written, and
// prints its figures. The master writes it in the background while serving;
// this verb follows it through the Stats counters.
#include <chrono>
#include <iostream>
#include <memory>
#include <thread>

#include "auth/token_file.h"
#include "cli/cli_util.h"
#include "cli/client_flags.h"
#include "cli/command.h"
#include "cli/tls_flags.h"
#include "rpc/master_client.h"

namespace crescent::cli {
namespace {

uint64_t Get(const rpc::ClusterStats& s, const std::string& name) {
  auto it = s.counters.find(name);
  return it == s.counters.end() ? 0 : it->second;
}

void AddSnapshot(CLI::App& root) {
  auto* app = root.add_subcommand(
      "snapshot", "Have the master (started with --data-dir) write a snapshot of its metadata now");
  auto master = std::make_shared<std::string>();
  auto wait_s = std::make_shared<int64_t>(600);
  auto token_file = std::make_shared<std::string>();
  app->add_option("--master", *master,
                  "Master address host:port or unix:PATH, or etcd://H1:2379,H2:2379/NAME for "
                  "cluster NAME's leader (default $CRESCENT_MASTER or 127.0.0.1:50051)");
  AddTokenFileFlag(*app, *token_file);
  auto tls = std::make_shared<TlsConfig>();
  AddClientTlsFlags(*app, *tls);
  app->add_option("--wait", *wait_s, "Give up waiting for it after this many seconds")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{86'400}));
  app->callback([master, wait_s, token_file, tls] {
    StatusOr<std::string> token = auth::LoadClientToken(*token_file);
    if (!token.ok()) return SetExitCode(Report("snapshot", token.status()));
    rpc::MasterClientOptions o;
    o.address = *master;
    o.token = std::move(*token);
    o.tls = *tls;
    auto client = rpc::MasterClient::Create(o);
    if (!client.ok()) return SetExitCode(Report("snapshot", client.status()));
    // Never destroyed, as in the client verbs: the process exits next.
    rpc::MasterClient* c = client.value().release();
    StatusOr<rpc::ClusterStats> before = c->Stats();
    if (!before.ok()) return SetExitCode(Report("snapshot", before.status()));
    const uint64_t failures = Get(*before, "crescent_snapshot_failures_total");
    StatusOr<uint64_t> taken = c->RequestSnapshot();
    if (!taken.ok()) return SetExitCode(Report("snapshot", taken.status()));
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(*wait_s);
    while (std::chrono::steady_clock::now() < give_up) {
      StatusOr<rpc::ClusterStats> now = c->Stats();
      if (!now.ok()) return SetExitCode(Report("snapshot", now.status()));
      if (Get(*now, "crescent_snapshots_total") > *taken) {
        const uint64_t objects = Get(*now, "crescent_last_snapshot_objects");
        const uint64_t bytes = Get(*now, "crescent_last_snapshot_bytes");
        std::cout << "snapshot of " << objects << " objects, " << FormatBytes(bytes) << " ("
                  << (objects == 0 ? 0 : bytes / objects) << " B/object), "
                  << Get(*now, "crescent_last_snapshot_duration_us") / 1000 << " ms, longest lock "
                  << Get(*now, "crescent_last_snapshot_longest_lock_us") << " us\n";
        return SetExitCode(0);
      }
      if (Get(*now, "crescent_snapshot_failures_total") > failures) {
        return SetExitCode(Report(
            "snapshot", Status(ErrorCode::kIoError,
                               "the master could not write the snapshot (its log says why)")));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    SetExitCode(
        Report("snapshot", Status(ErrorCode::kTimeout,
                                  "no snapshot written within " + std::to_string(*wait_s) + " s")));
  });
}

Registrar snapshot_registrar(AddSnapshot);

}  // namespace
}  // namespace crescent::cli
