// The flags every client verb takes (--master, --timeout-ms, --token-file, the
// TLS flags of tls_flags.h) and
// the client they connect, shared by client_commands.cc and
// namespace_commands.cc; AddTokenFileFlag is the token's flag alone, for the
// commands with a client of their own (store, bench, replay, snapshot).
#pragma once

#include <malloc.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <memory>
#include <string>

#include "auth/token_file.h"
#include "cli/tls_flags.h"
#include "crescent/client.h"

namespace crescent::cli {

// --token-file PATH (auth/token_file.h: else $CRESCENT_TOKEN).
inline void AddTokenFileFlag(CLI::App& app, std::string& path) {
  app.add_option("--token-file", path,
                 "File holding this client's token (NAME:SECRET, as `crescent token add` printed "
                 "it; mode 0600) for a master started with --auth-file (default: "
                 "$CRESCENT_TOKEN, the token itself; docs/security.md)");
}

struct ClientFlags {
  std::string master;
  int64_t timeout_ms = 5000;
  std::string token_file;
  TlsConfig tls;

  void Add(CLI::App& app) {
    app.add_option(
        "--master", master,
        "Master address host:port or unix:PATH, or etcd://H1:2379,H2:2379/NAME to follow "
        "cluster NAME's leader (default $CRESCENT_MASTER or 127.0.0.1:50051)");
    app.add_option("--timeout-ms", timeout_ms, "Per-call timeout")
        ->capture_default_str()
        ->check(CLI::Range(int64_t{1}, int64_t{24} * 3600 * 1000));
    AddTokenFileFlag(app, token_file);
    AddClientTlsFlags(app, tls);
  }

  // The client is never destroyed: a verb makes its calls and the process
  // exits. Tearing gRPC down instead can hang after the work is done when one
  // of gRPC's threads could not be started (seen under a tight `ulimit -v`:
  // its event engine waits forever for a timer thread that does not exist).
  //
  // Every malloc goes to one arena: glibc gives each thread that allocates an
  // arena of its own, reserving 64 MiB of address space apiece, and gRPC's
  // threads would take most of an address-space limit (ulimit -v) before
  // a value could be read (a verb holds at most one value; no contention).
  StatusOr<Client*> Connect() const {
    ::mallopt(M_ARENA_MAX, 1);
    StatusOr<std::string> token = auth::LoadClientToken(token_file);
    if (!token.ok()) return token.status();
    ClientConfig c;
    c.master_address = master;
    c.token = std::move(*token);
    c.tls = tls;
    c.rpc_timeout_ms = timeout_ms;
    c.transfer_timeout_ms = timeout_ms;
    StatusOr<std::unique_ptr<Client>> client = Client::Connect(c);
    if (!client.ok()) return client.status();
    return client.value().release();
  }
};

}  // namespace crescent::cli
