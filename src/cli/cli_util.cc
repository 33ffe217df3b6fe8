#include "cli/cli_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <csignal>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string_view>
#include <vector>

namespace crescent::cli {

StatusOr<uint64_t> ParseByteSize(const std::string& text) {
  auto bad = [&text] {
    return Status(ErrorCode::kInvalidArgument,
                  "'" + text +
                      "' is not a size: give bytes, or a number with a unit: K, M, G or T, also "
                      "written KB/KiB, MB/MiB, GB/GiB, TB/TiB (all powers of 1024), e.g. 512MiB");
  };
  uint64_t value = 0;
  const char* end = text.data() + text.size();
  auto [rest, ec] = std::from_chars(text.data(), end, value);
  if (ec == std::errc::result_out_of_range) {
    return Status(ErrorCode::kInvalidArgument, "size '" + text + "' is too large");
  }
  if (ec != std::errc()) return bad();
  std::string unit(rest, end);
  if (!unit.empty() && unit.front() == ' ') unit.erase(0, 1);  // "64 MiB"
  for (char& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  int shift = -1;
  if (unit.empty() || unit == "b") {
    shift = 0;
  } else if (unit.size() <= 3) {
    const std::string_view tail = std::string_view(unit).substr(1);
    const size_t power = std::string_view("kmgt").find(unit.front());
    if (power != std::string_view::npos && (tail.empty() || tail == "b" || tail == "ib")) {
      shift = 10 * static_cast<int>(power + 1);
    }
  }
  if (shift < 0) return bad();
  if (value > (UINT64_MAX >> shift)) {
    return Status(ErrorCode::kInvalidArgument, "size '" + text + "' is too large");
  }
  return value << shift;
}

CLI::Validator ByteSizeCheck() {
  return CLI::Validator(
      [](std::string& text) {
        StatusOr<uint64_t> size = ParseByteSize(text);
        return size.ok() ? std::string() : size.status().message();
      },
      "SIZE");
}

CLI::Validator CountCheck() {
  return CLI::Validator(
      [](std::string& text) {
        uint64_t n = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
        if (ec == std::errc() && end == text.data() + text.size()) return std::string();
        return "must be a whole number, 0 or more, not '" + text + "'";
      },
      "COUNT");
}

CLI::Validator PositiveCheck(const std::string& hint) {
  return CLI::Validator(
      [hint](std::string& text) {
        double v = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (ec == std::errc() && end == text.data() + text.size() && v > 0 && std::isfinite(v)) {
          return std::string();
        }
        return "must be a number greater than 0, not '" + text + "'" + hint;
      },
      "POSITIVE");
}

std::string EscapeText(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\\') {
      out += "\\\\";
    } else if (c >= 0x20 && c < 0x7f) {
      out += ch;
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

int Report(const char* verb, const Status& status) {
  if (status.ok()) return 0;
  std::cerr << "crescent " << verb << ": " << EscapeText(status.ToString()) << "\n";
  return status.code() == ErrorCode::kObjectNotFound ? 1 : 2;
}

namespace {
sigset_t ShutdownSet(bool hangup) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  if (hangup) sigaddset(&set, SIGHUP);
  return set;
}
}  // namespace

void BlockShutdownSignals(bool hangup) {
  sigset_t set = ShutdownSet(hangup);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

int WaitForShutdownSignal(const std::function<void()>& on_hangup) {
  sigset_t set = ShutdownSet(static_cast<bool>(on_hangup));
  for (;;) {
    int sig = 0;
    sigwait(&set, &sig);
    if (sig != SIGHUP) return sig;
    on_hangup();
  }
}

std::vector<std::string> OwnArguments() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> args;
  std::string arg;
  while (std::getline(in, arg, '\0')) args.push_back(arg);
  return args;
}

namespace {

// Marks every descriptor above stderr close-on-exec. Not every library opens
// its sockets with O_CLOEXEC (asio's acceptors do not): a listening socket
// carried into the new program would take connections nobody accepts.
void CloseOnExecAll() {
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return;
  while (const dirent* e = ::readdir(dir)) {
    int fd = -1;
    const std::string_view name(e->d_name);
    if (std::from_chars(name.data(), name.data() + name.size(), fd).ec != std::errc() ||
        fd <= STDERR_FILENO || fd == ::dirfd(dir)) {
      continue;
    }
    const int flags = ::fcntl(fd, F_GETFD);
    if (flags >= 0) ::fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
  }
  ::closedir(dir);
}

}  // namespace

Status ExecSelfAgain() {
  CloseOnExecAll();
  std::vector<std::string> args = OwnArguments();
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  ::execv("/proc/self/exe", argv.data());
  return Status(ErrorCode::kIoError, std::string("cannot run again: ") + std::strerror(errno));
}

}  // namespace crescent::cli
