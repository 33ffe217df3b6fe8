// RunWorkers (many_clients.h): the parent's side of the worker protocol.
// Workers start with posix_spawnp (argv[0] found on $PATH), with pipes for
// their stdin and stdout and every other descriptor of this process closed (an
// embedded cluster's listening sockets must not outlive it in a worker); their
// stderr is ours.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "bench/many_clients.h"

extern char** environ;

namespace crescent::bench {

namespace {

using Clock = std::chrono::steady_clock;

struct Child {
  pid_t pid = -1;
  int in = -1;       // its stdin (we write)
  int out = -1;      // its stdout (we read)
  std::string text;  // read so far
  bool ready = false;
  bool done = false;  // its result line is in
  std::string result;
};

Status Errno(const std::string& what) {
  return Status(ErrorCode::kIoError, what + ": " + std::strerror(errno));
}

Status Spawn(const std::vector<std::string>& argv, Child& c) {
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0) return Errno("pipe");
  if (::pipe2(out, O_CLOEXEC) != 0) {
    ::close(in[0]);
    ::close(in[1]);
    return Errno("pipe");
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclosefrom_np(&fa, STDERR_FILENO + 1);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const int rc = ::posix_spawnp(&c.pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(in[0]);
  ::close(out[1]);
  c.in = in[1];
  c.out = out[0];
  if (rc != 0) {
    c.pid = -1;
    errno = rc;
    return Errno("cannot start " + argv[0]);
  }
  return Status::Ok();
}

// CPU seconds a process has used (utime + stime of /proc/PID/stat); 0 when gone.
double ProcessCpuSeconds(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const size_t paren = all.rfind(')');
  if (paren == std::string::npos) return 0;
  std::istringstream rest(all.substr(paren + 2));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  // After the command: state is field 3; utime and stime are fields 14 and 15.
  for (int i = 3; i <= 13 && rest >> field; ++i) {
  }
  rest >> utime >> stime;
  return double(utime + stime) / double(::sysconf(_SC_CLK_TCK));
}

double OwnCpuSeconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) / 1e9;
}

// Reads whatever the children wrote until `enough(c)` holds for every one, or
// `deadline`. A child whose stdout ends before that fails the run.
Status ReadUntil(std::vector<Child>& kids, const std::function<bool(Child&)>& enough,
                 Clock::time_point deadline, const char* waiting_for) {
  for (;;) {
    std::vector<pollfd> fds;
    std::vector<size_t> who;
    for (size_t i = 0; i < kids.size(); ++i) {
      if (enough(kids[i])) continue;
      fds.push_back({kids[i].out, POLLIN, 0});
      who.push_back(i);
    }
    if (fds.empty()) return Status::Ok();
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      return Status(ErrorCode::kTimeout,
                    std::to_string(fds.size()) + " worker(s) still " + waiting_for);
    }
    const int n = ::poll(fds.data(), fds.size(), int(std::min<int64_t>(left.count(), 1000)));
    if (n < 0 && errno != EINTR) return Errno("poll");
    for (size_t k = 0; n > 0 && k < fds.size(); ++k) {
      if (fds[k].revents == 0) continue;
      Child& c = kids[who[k]];
      char buf[65536];
      const ssize_t got = ::read(c.out, buf, sizeof(buf));
      if (got <= 0) {
        return Status(ErrorCode::kInternal,
                      "worker " + std::to_string(who[k]) + " ended while " + waiting_for);
      }
      c.text.append(buf, size_t(got));
    }
  }
}

void WriteAll(std::vector<Child>& kids, const char* line) {
  for (Child& c : kids) {
    const size_t len = std::strlen(line);
    if (::write(c.in, line, len) != ssize_t(len)) {
      // A worker gone already: its end shows when it is read or waited for.
    }
  }
}

// Waits for every child; kills those still running at `deadline`. Ok when
// each exited 0.
Status Reap(std::vector<Child>& kids, Clock::time_point deadline) {
  Status first = Status::Ok();
  for (size_t i = 0; i < kids.size(); ++i) {
    Child& c = kids[i];
    if (c.pid <= 0) continue;
    int status = 0;
    while (::waitpid(c.pid, &status, WNOHANG) == 0) {
      if (Clock::now() >= deadline) {
        ::kill(c.pid, SIGKILL);
        ::waitpid(c.pid, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (first.ok() && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
      first = Status(ErrorCode::kInternal, "worker " + std::to_string(i) + " failed");
    c.pid = -1;
  }
  for (Child& c : kids) {
    if (c.in >= 0) ::close(c.in);
    if (c.out >= 0) ::close(c.out);
    c.in = c.out = -1;
  }
  return first;
}

}  // namespace

StatusOr<ManyClientsRep> RunWorkers(int n,
                                    const std::function<std::vector<std::string>(int)>& argv_for,
                                    int server_pid, double ready_timeout_s) {
  std::vector<Child> kids(static_cast<size_t>(n));
  auto fail = [&](Status s) {
    for (Child& c : kids) {
      if (c.pid > 0) ::kill(c.pid, SIGKILL);
    }
    (void)Reap(kids, Clock::now());
    return s;
  };
  for (int i = 0; i < n; ++i) {
    if (Status s = Spawn(argv_for(i), kids[size_t(i)]); !s.ok()) return fail(s);
  }
  const auto ready_by = Clock::now() + std::chrono::duration<double>(ready_timeout_s);
  auto is_ready = [](Child& c) {
    c.ready = c.ready || c.text.find("ready\n") != std::string::npos;
    return c.ready;
  };
  if (Status s = ReadUntil(kids, is_ready, std::chrono::time_point_cast<Clock::duration>(ready_by),
                           "getting ready");
      !s.ok()) {
    return fail(s);
  }
  for (Child& c : kids) c.text.erase(0, c.text.find("ready\n") + 6);

  ManyClientsRep rep;
  std::vector<double> cpu0;
  for (const Child& c : kids) cpu0.push_back(ProcessCpuSeconds(c.pid));
  auto server_cpu = [server_pid] {
    if (server_pid < 0) return 0.0;
    return server_pid > 0 ? ProcessCpuSeconds(server_pid) : OwnCpuSeconds();
  };
  const double server0 = server_cpu();
  const auto go = Clock::now();
  WriteAll(kids, "go\n");
  auto has_result = [](Child& c) {
    const size_t nl = c.text.find('\n');
    if (!c.done && nl != std::string::npos) {
      c.result = c.text.substr(0, nl);
      c.done = true;
    }
    return c.done;
  };
  // A window is seconds long; a worker's result comes right after it ends.
  if (Status s = ReadUntil(kids, has_result, Clock::now() + std::chrono::minutes(10), "running");
      !s.ok()) {
    return fail(s);
  }
  rep.wall_s = std::chrono::duration<double>(Clock::now() - go).count();
  rep.server_cpu_s = server_cpu() - server0;
  for (size_t i = 0; i < kids.size(); ++i)
    rep.client_cpu_s += ProcessCpuSeconds(kids[i].pid) - cpu0[i];
  for (Child& c : kids) {
    StatusOr<WorkerResult> r = WorkerResultFromJson(c.result);
    if (!r.ok()) return fail(r.status());
    rep.workers.push_back(std::move(r.value()));
  }
  WriteAll(kids, "end\n");
  if (Status s = Reap(kids, Clock::now() + std::chrono::seconds(60)); !s.ok()) return s;
  return rep;
}

}  // namespace crescent::bench
