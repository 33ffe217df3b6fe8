// The flags every client verb takes (--master, --timeout-ms) and the client
// they connect, shared by client_commands.cc and namespace_commands.cc.
#pragma once

#include <malloc.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <memory>
#include <string>

#include "crescent/client.h"

namespace crescent::cli {

struct ClientFlags {
  std::string master;
  int64_t timeout_ms = 5000;

  void Add(CLI::App& app) {
    app.add_option("--master", master,
                   "Master address host:port or unix:PATH (default $CRESCENT_MASTER or "
                   "127.0.0.1:50051)");
    app.add_option("--timeout-ms", timeout_ms, "Per-call timeout")
        ->capture_default_str()
        ->check(CLI::Range(int64_t{1}, int64_t{24} * 3600 * 1000));
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
    ClientConfig c;
    c.master_address = master;
    c.rpc_timeout_ms = timeout_ms;
    c.transfer_timeout_ms = timeout_ms;
    StatusOr<std::unique_ptr<Client>> client = Client::Connect(c);
    if (!client.ok()) return client.status();
    return client.value().release();
  }
};

}  // namespace crescent::cli
