#include "cli/cli_util.h"

#include <csignal>
#include <cstdio>
#include <iostream>

namespace crescent::cli {

StatusOr<uint64_t> ParseByteSize(const std::string& text) {
  size_t pos = 0;
  while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') ++pos;
  if (pos == 0) return Status(ErrorCode::kInvalidArgument, "bad size '" + text + "'");
  uint64_t value = 0;
  for (size_t i = 0; i < pos; ++i) {
    uint64_t next = value * 10 + static_cast<uint64_t>(text[i] - '0');
    if (next / 10 != value) return Status(ErrorCode::kInvalidArgument, "size too large");
    value = next;
  }
  std::string unit = text.substr(pos);
  struct Unit {
    const char* name;
    uint64_t factor;
  };
  static constexpr Unit kUnits[] = {{"", 1},
                                    {"B", 1},
                                    {"K", 1024},
                                    {"KiB", 1024},
                                    {"KB", 1000},
                                    {"M", 1024 * 1024},
                                    {"MiB", 1024 * 1024},
                                    {"MB", 1000 * 1000},
                                    {"G", uint64_t{1} << 30},
                                    {"GiB", uint64_t{1} << 30},
                                    {"GB", 1000 * 1000 * 1000}};
  for (const Unit& u : kUnits) {
    if (unit == u.name) {
      if (value > UINT64_MAX / u.factor) {
        return Status(ErrorCode::kInvalidArgument, "size too large");
      }
      return value * u.factor;
    }
  }
  return Status(ErrorCode::kInvalidArgument,
                "bad size unit in '" + text + "' (use B, KiB, MiB, GiB, KB, MB, GB)");
}

std::string FormatBytes(uint64_t bytes) {
  static constexpr const char* kNames[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, kNames[u]);
  return buf;
}

int Report(const char* verb, const Status& status) {
  if (status.ok()) return 0;
  std::cerr << "crescent " << verb << ": " << status.ToString() << "\n";
  return status.code() == ErrorCode::kObjectNotFound ? 1 : 2;
}

namespace {
sigset_t ShutdownSet() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}
}  // namespace

void BlockShutdownSignals() {
  sigset_t set = ShutdownSet();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

int WaitForShutdownSignal() {
  sigset_t set = ShutdownSet();
  int sig = 0;
  sigwait(&set, &sig);
  return sig;
}

}  // namespace crescent::cli
