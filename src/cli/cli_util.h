// Helpers shared by the crescent subcommands: byte sizes with units, the checks
// of flag values, the escaping of printed text, exit codes from a Status, and
// waiting for Ctrl-C / SIGTERM.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/format_bytes.h"
#include "crescent/status.h"

namespace crescent::cli {

// A byte count: digits, then optionally a unit, in any case: B; K, KB or KiB;
// M, MB or MiB; G, GB or GiB; T, TB or TiB. Every unit is a power of 1024
// (1G = 1GB = 1GiB = 2^30 bytes): sizes here are of memory, and FormatBytes
// (common/format_bytes.h) prints them so. Every size flag is read by this one
// parser.
StatusOr<uint64_t> ParseByteSize(const std::string& text);
// What every size flag's --help adds after its own text.
inline constexpr const char* kSizeHelp =
    " (bytes, or with a unit: K, M, G, T, also written KB/KiB, MB/MiB, ...; all are powers of "
    "1024)";

// The eviction policy of `crescent serve`, `crescent master` and replay's
// embedded cluster when --eviction-policy is not given: adaptive, which met
// every target its issue set for being the default (docs/adaptive.md, "The
// default policy"). MasterConfig, the engine's own struct, keeps lru for code
// that embeds the master and for the tests that assume its order.
inline constexpr const char* kDefaultEvictionPolicy = "adaptive";

// CLI11 checks whose messages say what is wrong in the user's terms (CLI11's
// own Range and PositiveNumber write out the largest double). Negative counts
// must be refused here: CLI11 reads "-1" into an unsigned option as 2^64 - 1.
CLI::Validator ByteSizeCheck();                         // what ParseByteSize accepts
CLI::Validator CountCheck();                            // a whole number, 0 or more
CLI::Validator PositiveCheck(const std::string& hint);  // a number above 0; `hint` follows

// Text from outside this process as every command prints it (keys in ls and
// exists, names and endpoints in stat and top, error messages, which quote
// keys, paths and peers' words): printable ASCII as is, a backslash as \\,
// and every other byte (a newline, a tab, a terminal escape, any byte above
// 0x7e) as \xHH, so that one key always prints as one line of plain text,
// distinct keys print differently, and no name can move the cursor or rewrite
// the operator's screen. `ls -0` prints keys raw instead.
std::string EscapeText(std::string_view text);

// 0 ok, 1 not found, 2 anything else; prints "crescent VERB: STATUS" to stderr,
// the status escaped (EscapeText), when not ok.
int Report(const char* verb, const Status& status);

// Blocks SIGINT and SIGTERM (and SIGHUP with `hangup`) in this thread and every
// thread it starts later; call before starting servers. WaitForShutdownSignal
// then returns the signal number; given `on_hangup` (after
// BlockShutdownSignals(true)), it runs it at each SIGHUP and waits on.
void BlockShutdownSignals(bool hangup = false);
int WaitForShutdownSignal(const std::function<void()>& on_hangup = {});

// This process's arguments, argv[0] first (/proc/self/cmdline).
std::vector<std::string> OwnArguments();
// Runs this program again in this process, with the same arguments
// (/proc/self/exe), every descriptor but stdin, stdout and stderr closed:
// returns only if that fails, with why.
Status ExecSelfAgain();

}  // namespace crescent::cli
