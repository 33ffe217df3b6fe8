// Helpers shared by the crescent subcommands: byte sizes with units, exit codes
// from a Status, and waiting for Ctrl-C / SIGTERM.
#pragma once

#include <cstdint>
#include <string>

#include "crescent/status.h"

namespace crescent::cli {

// "4096", "64KiB", "1MiB", "1GiB", "2GB" (decimal units are powers of 1000).
StatusOr<uint64_t> ParseByteSize(const std::string& text);
std::string FormatBytes(uint64_t bytes);  // "1.0 GiB"

// 0 ok, 1 not found, 2 anything else; prints "crescent VERB: STATUS" to stderr
// when not ok.
int Report(const char* verb, const Status& status);

// Blocks SIGINT and SIGTERM in this thread and every thread it starts later; call
// before starting servers. WaitForShutdownSignal then returns the signal number.
void BlockShutdownSignals();
int WaitForShutdownSignal();

}  // namespace crescent::cli
