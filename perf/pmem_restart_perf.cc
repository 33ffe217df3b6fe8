// pmem_restart_perf: warm restart of a whole `crescent serve` whose objects
// live on the persistent tier (docs/persistent-tier.md). It starts
//   crescent serve --data-dir D --pmem F:SIZE
// as a child process, puts --objects values of --size bytes on the persistent
// segment, kills the child with SIGKILL, starts it again with the same flags,
// and prints the time to the first request served (from the new start to a
// get that returns the bytes) and to every object verified (the master's
// background check of the file's objects against their checksums).
//
//   build/bin/pmem_restart_perf --objects 1000000 --size 1024 --dir /dev/shm
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "crescent/client.h"
#include "perf_util.h"

namespace crescent::perf {
namespace {

struct Flags {
  uint64_t objects = 1'000'000;
  uint64_t size = 1024;
  std::string dir = "/dev/shm";
  std::string crescent = "build/bin/crescent";
};

// A running `crescent serve`, its stdout read until "ready".
struct Serve {
  pid_t pid = -1;
  std::string master;
};

bool Start(const Flags& f, const std::vector<std::string>& args, Serve* out) {
  int fds[2];
  if (pipe(fds) != 0) return false;
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(f.crescent.c_str()));
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(f.crescent.c_str(), argv.data());
    _exit(127);
  }
  close(fds[1]);
  FILE* in = fdopen(fds[0], "r");
  char line[4096];
  while (fgets(line, sizeof line, in) != nullptr) {
    const char* at = std::strstr(line, "listening on ");
    if (at != nullptr && out->master.empty()) {
      std::string rest(at + std::strlen("listening on "));
      out->master = rest.substr(0, rest.find_first_of(", \n"));
    }
    if (std::strncmp(line, "ready", 5) == 0) break;
  }
  out->pid = pid;
  // Keep draining its output so that it never blocks on a full pipe.
  std::thread([in] {
    char sink[4096];
    while (fgets(sink, sizeof sink, in) != nullptr) {
    }
    fclose(in);
  }).detach();
  return !out->master.empty();
}

uint64_t Counter(Client& c, const std::string& name) {
  StatusOr<ClusterStat> st = c.Stat();
  if (!st.ok()) return ~uint64_t{0};
  auto it = st->counters.find(name);
  return it == st->counters.end() ? 0 : it->second;
}

int Run(const Flags& f) {
  namespace fs = std::filesystem;
  const std::string dir = f.dir + "/pmem-restart-perf-" + std::to_string(getpid());
  fs::create_directories(dir);
  const uint64_t file = (f.objects * ((f.size + 63) / 64 * 64) * 5 / 4 + (8 << 20)) / 4096 * 4096;
  const std::vector<std::string> args = {
      "serve",  "--port", "0", "--http-port", "0", "--data-dir", dir + "/data", "--pmem",
      dir + "/segment.pmem:" + std::to_string(file + 4096), "--segment-size", "8MiB",
      "--bloom-expected-keys", std::to_string(f.objects)};
  Serve first;
  if (!Start(f, args, &first)) return 1;
  ClientConfig cc;
  cc.master_address = first.master;
  auto client = Client::Connect(cc);
  if (!client.ok()) return 1;
  std::string pmem;
  StatusOr<ClusterStat> st = (*client)->Stat();
  if (!st.ok()) return 1;
  for (const SegmentUsage& s : st->segments) {
    if (s.tier == "pmem") pmem = s.name;
  }
  std::vector<std::byte> value(f.size, std::byte{0x5a});
  (void)(*client)->RegisterBuffer(value.data(), value.size());
  PutOptions po;
  po.preferred_segment = pmem;
  const double p0 = Now();
  constexpr uint64_t kBatch = 512;
  for (uint64_t i = 0; i < f.objects; i += kBatch) {
    std::vector<std::string> keys;
    std::vector<void*> ptrs;
    std::vector<size_t> sizes;
    for (uint64_t k = i; k < std::min(f.objects, i + kBatch); ++k) {
      keys.push_back(KeyOf(k));
      ptrs.push_back(value.data());
      sizes.push_back(f.size);
    }
    for (const Status& s : (*client)->BatchPutFrom(keys, ptrs, sizes, po)) {
      if (!s.ok()) std::fprintf(stderr, "put: %s\n", s.ToString().c_str());
    }
  }
  const double p1 = Now();
  std::printf("put %llu objects of %llu bytes on %s in %.1f s\n",
              static_cast<unsigned long long>(f.objects), static_cast<unsigned long long>(f.size),
              pmem.c_str(), p1 - p0);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // past one log sync interval
  client->reset();
  kill(first.pid, SIGKILL);
  waitpid(first.pid, nullptr, 0);

  const double t0 = Now();
  Serve second;
  if (!Start(f, args, &second)) return 1;
  const double t_ready = Now();
  cc.master_address = second.master;
  auto again = Client::Connect(cc);
  if (!again.ok()) return 1;
  double t_first = 0;
  for (;;) {
    StatusOr<std::vector<std::byte>> v = (*again)->Get(KeyOf(f.objects / 2));
    if (v.ok() && *v == value) {
      t_first = Now();
      break;
    }
    if (Now() - t0 > 600) return 1;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  double t_verified = 0;
  uint64_t ok = 0, corrupt = 0, skipped = 0;
  for (;;) {
    ok = Counter(**again, "crescent_pmem_verifications_total{result=\"ok\"}");
    corrupt = Counter(**again, "crescent_pmem_verifications_total{result=\"corrupt\"}");
    skipped = Counter(**again, "crescent_pmem_verifications_total{result=\"skipped\"}");
    const uint64_t pending = Counter(**again, "crescent_pmem_verifications_pending");
    if (pending == 0 && ok + corrupt + skipped >= f.objects) {
      t_verified = Now();
      break;
    }
    if (Now() - t0 > 1200) return 1;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const uint64_t retries = Counter(**again, "crescent_pmem_verification_retries_total");
  std::printf(
      "restart: ready %.2f s, first request served %.2f s, all %llu checked %.2f s (ok %llu, "
      "corrupt %llu, skipped %llu; %llu checks sent again)\n",
      t_ready - t0, t_first - t0, static_cast<unsigned long long>(f.objects), t_verified - t0,
      static_cast<unsigned long long>(ok), static_cast<unsigned long long>(corrupt),
      static_cast<unsigned long long>(skipped), static_cast<unsigned long long>(retries));
  again->reset();
  kill(second.pid, SIGTERM);
  waitpid(second.pid, nullptr, 0);
  fs::remove_all(dir);
  return 0;
}

}  // namespace
}  // namespace crescent::perf

int main(int argc, char** argv) {
  crescent::perf::Flags f;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--objects") f.objects = std::stoull(v);
    else if (k == "--size") f.size = std::stoull(v);
    else if (k == "--dir") f.dir = v;
    else if (k == "--crescent") f.crescent = v;
    else {
      std::fprintf(stderr,
                   "usage: pmem_restart_perf [--objects N] [--size B] [--dir D] [--crescent BIN]\n");
      return 2;
    }
  }
  return crescent::perf::Run(f);
}
