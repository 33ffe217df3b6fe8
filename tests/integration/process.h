// Process: one child process of an integration test (a `crescent master`,
// `store` or `serve`), its stdout and stderr captured in a log file that the
// test polls for the lines the process prints ("ready", its address).
//
// The child gets PR_SET_PDEATHSIG(SIGKILL), so a crashed or killed test binary
// leaves no servers behind holding ports; the destructor SIGKILLs and reaps a
// child that is still running.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <regex>
#include <string>
#include <vector>

namespace crescent::itest {

using std::chrono::milliseconds;

// The `crescent` binary under test: the one beside this test binary (CMake
// puts both in build/bin). Looked up at run time rather than compiled in, so
// that no object file names the clone's path (ccache then serves the same
// objects to every clone on the machine).
const std::string& CrescentBin();

// How a child ended.
struct ExitStatus {
  bool exited = false;  // true: exit(code); false: killed by `signal`
  int code = 0;
  int signal = 0;
  std::string ToString() const;
};

class Process {
 public:
  // Starts argv[0] (a path) with argv[1..]; stdin is /dev/null, stdout and
  // stderr go to `log_path` (created/truncated). started() says whether it ran.
  Process(const std::vector<std::string>& argv, std::string log_path);
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  bool started() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  const std::string& log_path() const { return log_path_; }
  // Everything the child printed so far.
  std::string Output() const;

  // Polls the log until `substring` appears; false on timeout or if the child
  // exited without printing it.
  bool WaitForLine(const std::string& substring, milliseconds timeout);
  // Polls the log until `re` matches somewhere; returns the capture groups
  // (index 0: the whole match), or nullopt on timeout / early exit.
  std::optional<std::vector<std::string>> WaitForMatch(const std::regex& re, milliseconds timeout);

  // Sends `sig` (no-op once reaped).
  void Kill(int sig);
  // SIGSTOP, then waits (at most 5 s) until every thread is stopped: the
  // signal takes effect as each thread is next scheduled, so a request sent
  // right after kill() alone could still be answered.
  void Freeze();
  // Waits up to `timeout` for the child to end; nullopt if it is still running.
  std::optional<ExitStatus> Wait(milliseconds timeout);
  // Whether the child is still running (reaps it if it has ended).
  bool Running();

 private:
  pid_t pid_ = -1;
  std::string log_path_;
  std::optional<ExitStatus> exit_;
};

// The result of a command run to completion.
struct CommandResult {
  int exit_code = -1;  // -1: killed by a signal or timed out
  std::string out;
  std::string err;
  bool timed_out = false;
};

// Runs argv to completion with `stdin_data` on its stdin, capturing stdout and
// stderr separately (through files in `scratch_dir`, so a large output cannot
// deadlock a pipe). SIGKILLs it after `timeout`.
CommandResult RunCommand(const std::vector<std::string>& argv, const std::string& stdin_data,
                         const std::string& scratch_dir, milliseconds timeout);

// Reads a whole file (empty if it cannot be read).
std::string ReadFileOrEmpty(const std::string& path);
bool WriteFile(const std::string& path, const std::string& data);

// A fresh directory under $TMPDIR (or /tmp); removed by the destructor unless
// keep() was called (tests keep it when they fail, for the logs).
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }
  void keep() { keep_ = true; }

 private:
  std::string path_;
  bool keep_ = false;
};

}  // namespace crescent::itest
