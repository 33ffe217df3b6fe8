#include "integration/process.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace crescent::itest {

const std::string& CrescentBin() {
  static const std::string path =
      (std::filesystem::read_symlink("/proc/self/exe").parent_path() / "crescent").string();
  return path;
}

namespace {

constexpr milliseconds kPoll{10};

ExitStatus FromWaitStatus(int status) {
  ExitStatus e;
  if (WIFEXITED(status)) {
    e.exited = true;
    e.code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    e.signal = WTERMSIG(status);
  }
  return e;
}

// fork + exec with stdin/stdout/stderr opened from the given paths. Only
// async-signal-safe calls run between fork and exec: the parent has gRPC
// threads, so the child must not touch locks or allocate.
pid_t Spawn(const std::vector<std::string>& argv, const std::string& in_path,
            const std::string& out_path, const std::string& err_path) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid != 0) return pid;  // parent (or -1)
  // Die with the test binary, so no server outlives a crashed test.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(127);
  int in = open(in_path.c_str(), O_RDONLY);
  int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
  int err = err_path == out_path
                ? out
                : open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
  if (in < 0 || out < 0 || err < 0) _exit(126);
  dup2(in, 0);
  dup2(out, 1);
  dup2(err, 2);
  // The test binary's signal mask and dispositions must not leak in.
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  signal(SIGPIPE, SIG_DFL);
  execv(args[0], args.data());
  _exit(127);
}

}  // namespace

std::string ExitStatus::ToString() const {
  return exited ? "exit " + std::to_string(code) : "signal " + std::to_string(signal);
}

std::string ReadFileOrEmpty(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool WriteFile(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  return static_cast<bool>(out);
}

Process::Process(const std::vector<std::string>& argv, std::string log_path)
    : log_path_(std::move(log_path)) {
  pid_ = Spawn(argv, "/dev/null", log_path_, log_path_);
}

Process::~Process() {
  if (pid_ > 0 && !exit_) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
}

std::string Process::Output() const { return ReadFileOrEmpty(log_path_); }

bool Process::Running() {
  if (pid_ <= 0 || exit_) return false;
  int status = 0;
  pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    exit_ = FromWaitStatus(status);
    return false;
  }
  return true;
}

bool Process::WaitForLine(const std::string& substring, milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (Output().find(substring) != std::string::npos) return true;
    // Read once more after exit: the last line may have landed meanwhile.
    if (!Running()) return Output().find(substring) != std::string::npos;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(kPoll);
  }
}

std::optional<std::vector<std::string>> Process::WaitForMatch(const std::regex& re,
                                                              milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  auto match = [&]() -> std::optional<std::vector<std::string>> {
    std::string text = Output();
    std::smatch m;
    if (!std::regex_search(text, m, re)) return std::nullopt;
    std::vector<std::string> groups;
    for (const auto& g : m) groups.push_back(g.str());
    return groups;
  };
  while (true) {
    if (auto m = match()) return m;
    if (!Running()) return match();
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(kPoll);
  }
}

void Process::Kill(int sig) {
  if (pid_ > 0 && !exit_) ::kill(pid_, sig);
}

namespace {

// Whether every thread of `pid` is stopped (state T in /proc/PID/task/*/stat).
bool AllThreadsStopped(pid_t pid) {
  std::error_code ec;
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  bool any = false;
  for (const auto& t : std::filesystem::directory_iterator(tasks, ec)) {
    std::ifstream stat(t.path() / "stat");
    std::string line;
    std::getline(stat, line);
    const size_t paren = line.rfind(')');
    if (paren == std::string::npos || paren + 2 >= line.size()) continue;
    if (line[paren + 2] != 'T' && line[paren + 2] != 't') return false;
    any = true;
  }
  return any;
}

}  // namespace

void Process::Freeze() {
  Kill(SIGSTOP);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (pid_ > 0 && !exit_ && !AllThreadsStopped(pid_) &&
         std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

std::optional<ExitStatus> Process::Wait(milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (Running()) {
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(kPoll);
  }
  return exit_;
}

CommandResult RunCommand(const std::vector<std::string>& argv, const std::string& stdin_data,
                         const std::string& scratch_dir, milliseconds timeout) {
  static std::atomic<int> counter{0};
  std::string base = scratch_dir + "/cmd" + std::to_string(++counter);
  CommandResult r;
  if (!WriteFile(base + ".in", stdin_data)) {
    r.err = "cannot write " + base + ".in";
    return r;
  }
  pid_t pid = Spawn(argv, base + ".in", base + ".out", base + ".err");
  if (pid < 0) {
    r.err = std::string("fork failed: ") + std::strerror(errno);
    return r;
  }
  auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      r.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(kPoll);
  }
  ExitStatus e = FromWaitStatus(status);
  r.exit_code = (e.exited && !r.timed_out) ? e.code : -1;
  r.out = ReadFileOrEmpty(base + ".out");
  r.err = ReadFileOrEmpty(base + ".err");
  return r;
}

TempDir::TempDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern =
      std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/crescent-itest-XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) != nullptr) path_ = buf.data();
}

TempDir::~TempDir() {
  if (path_.empty() || keep_) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace crescent::itest
