// --max-connections and --idle-timeout-ms: the bounds of every long-lived port
// a command serves (transfer/connection_limits.h): the master's lean control
// port and socket, a store node's data port. `crescent serve` takes them once,
// for all of its ports.
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <string>

#include "transfer/connection_limits.h"

namespace crescent::cli {

struct PortLimitFlags {
  size_t max_connections = transfer::ConnectionLimits{}.max_connections;
  int64_t idle_timeout_ms = transfer::ConnectionLimits{}.idle_timeout.count();

  // `ports` names the ports they bound, for --help.
  void Add(CLI::App& app, const std::string& ports) {
    app.add_option("--max-connections", max_connections,
                   "Connections held at most per listening port (" + ports +
                       "); past that a new connection is told so and closed (keep the "
                       "process's open-file limit above the sum)")
        ->capture_default_str()
        ->check(CLI::Range(size_t{1}, size_t{1} << 20));
    app.add_option("--idle-timeout-ms", idle_timeout_ms,
                   "Close a connection to a listening port (" + ports +
                       ") on which no byte moved for this long, between frames or inside one "
                       "(0: never; clients reconnect on their next call)")
        ->capture_default_str()
        ->check(CLI::Range(int64_t{0}, int64_t{86'400'000}));
  }
  transfer::ConnectionLimits ToLimits() const {
    return {max_connections, std::chrono::milliseconds(idle_timeout_ms)};
  }
};

}  // namespace crescent::cli
