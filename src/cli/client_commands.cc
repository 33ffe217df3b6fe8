// The client verbs: put, get, exists, rm, ls, stat. Each connects to the master
// named by --master (default $CRESCENT_MASTER, else 127.0.0.1:50051) and exits 0
// on success, 1 when a key is not found, 2 on usage or any other error, with a
// message on stderr.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <new>
#include <stdexcept>
#include <system_error>

#include "cli/cli_util.h"
#include "cli/command.h"
#include "crescent/client.h"

namespace crescent::cli {
namespace {

struct Common {
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
  StatusOr<Client*> Connect() const {
    ClientConfig c;
    c.master_address = master;
    c.rpc_timeout_ms = timeout_ms;
    c.transfer_timeout_ms = timeout_ms;
    StatusOr<std::unique_ptr<Client>> client = Client::Connect(c);
    if (!client.ok()) return client.status();
    return client.value().release();
  }
};

Status IoError(const std::string& what, int err) {
  return Status(ErrorCode::kIoError, what + ": " + std::generic_category().message(err));
}

Status TooBig(const std::string& name, size_t want, size_t done) {
  std::string size = want > done ? " (" + std::to_string(want) + " bytes)" : "";
  return Status(ErrorCode::kIoError, "cannot hold the value of " + name + size + " in memory (" +
                                         std::to_string(done) + " bytes read so far)");
}

// Reads all of `fd` (called `name` in messages). Any failure is an error, never
// a shorter value: a put of a truncated value would be silent data loss. A
// regular file's size is known up front, so its buffer is allocated once (not
// doubled while reading) and failing that allocation fails before any reading.
StatusOr<std::string> ReadAll(int fd, const std::string& name) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    return IoError("cannot read " + name, err);
  }
  if (S_ISDIR(st.st_mode)) return IoError("cannot read " + name, EISDIR);
  std::string data;
  size_t want = 0;  // the regular file's size from here, 0 if unknown
  size_t done = 0;  // bytes of `data` filled
  try {
    if (S_ISREG(st.st_mode)) {
      off_t pos = ::lseek(fd, 0, SEEK_CUR);  // stdin may be partly consumed
      if (pos >= 0 && st.st_size > pos) want = static_cast<size_t>(st.st_size - pos);
      data.resize(want);
    }
    // Past the known size (a pipe, a growing file, /proc) read through a small
    // buffer, so a file of exactly its st_size needs no second allocation.
    char chunk[64 * 1024];
    for (;;) {
      bool direct = done < data.size();
      ssize_t n = direct ? ::read(fd, data.data() + done, data.size() - done)
                         : ::read(fd, chunk, sizeof(chunk));
      int err = errno;  // before building a message can change it
      if (n < 0 && err == EINTR) continue;
      if (n < 0) {
        return IoError("cannot read " + name + " after " + std::to_string(done) + " bytes", err);
      }
      if (n == 0) break;  // end of file; sysfs files end before their st_size
      if (!direct) data.append(chunk, static_cast<size_t>(n));
      done += static_cast<size_t>(n);
    }
  } catch (const std::bad_alloc&) {
    return TooBig(name, want, done);
  } catch (const std::length_error&) {
    return TooBig(name, want, done);
  }
  data.resize(done);
  return data;
}

StatusOr<std::string> ReadInput(const std::string& file) {
  if (file.empty() || file == "-") return ReadAll(STDIN_FILENO, "stdin");
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    return IoError("cannot read " + file, err);
  }
  StatusOr<std::string> data = ReadAll(fd, file);
  ::close(fd);
  return data;
}

// Writes all of `data`, retrying short writes.
Status WriteAll(int fd, const std::vector<std::byte>& data, const std::string& name) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    int err = errno;
    if (n < 0 && err == EINTR) continue;
    if (n < 0) return IoError("cannot write " + name, err);
    if (n == 0) return Status(ErrorCode::kIoError, "cannot write " + name);
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

// Writes `data` to the open `fd` (then fsyncs it, with `sync`) and closes it;
// close can report a deferred write error (NFS, quota), so it is checked too.
Status WriteAndClose(int fd, const std::vector<std::byte>& data, const std::string& name,
                     bool sync = false) {
  Status s = WriteAll(fd, data, name);
  if (s.ok() && sync && ::fsync(fd) != 0) s = IoError("cannot write " + name, errno);
  if (::close(fd) != 0) {
    int err = errno;
    if (s.ok()) s = IoError("cannot write " + name, err);
  }
  return s;
}

// The process's umask, read without changing it (umask(2) can only set it,
// and gRPC threads are running); 022 if /proc cannot say.
mode_t CurrentUmask() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("Umask:", 0) == 0)
      return static_cast<mode_t>(std::stoul(line.substr(6), nullptr, 8));
  }
  return 022;
}

// Whether FILE can be replaced by renaming a new file over it without changing
// what a write in place would have done: it is missing, or a regular file of
// ours with one link that we may write (so no permission, owner, hard link or
// sticky-directory rule is bypassed or newly in the way).
bool ReplaceableByRename(const std::string& file, const struct stat& st, bool exists) {
  if (!exists) return true;
  return S_ISREG(st.st_mode) && st.st_uid == ::geteuid() && st.st_nlink == 1 &&
         ::faccessat(AT_FDCWD, file.c_str(), W_OK, AT_EACCESS) == 0;
}

// Plain write(2)s, not a stream: a small value sits in a stream's buffer until
// close, whose failure (ENOSPC, EIO) a stream destructor would swallow.
//
// A new file, or a regular file of ours (ReplaceableByRename), is written under
// a temporary name in its directory, synced, and renamed over FILE once every
// byte is in, so a get that fails half way (a full disk, a file size limit:
// main() ignores SIGXFSZ so that one is an error too) leaves FILE as it was
// and no partial value behind. Anything else (a device, a FIFO, a symbolic
// link, another user's file, a hard-linked one), and a directory where no
// temporary file can be made, is written in place.
Status WriteOutput(const std::string& file, const std::vector<std::byte>& data) {
  if (file.empty() || file == "-") return WriteAll(STDOUT_FILENO, data, "to stdout");
  struct stat st {};
  const bool exists = ::lstat(file.c_str(), &st) == 0;
  if (ReplaceableByRename(file, st, exists)) {
    std::string tmp = file + ".crescent-XXXXXX";
    int fd = ::mkostemp(tmp.data(), O_CLOEXEC);
    if (fd >= 0) {
      const mode_t mode = exists ? st.st_mode & 07777 : 0666 & ~CurrentUmask();
      Status s;
      if (::fchmod(fd, mode) == 0) {
        s = WriteAndClose(fd, data, file, /*sync=*/true);
      } else {
        s = IoError("cannot write " + file, errno);
        ::close(fd);
      }
      if (s.ok() && ::rename(tmp.c_str(), file.c_str()) != 0) {
        s = IoError("cannot write " + file, errno);
      }
      if (!s.ok()) ::unlink(tmp.c_str());
      return s;
    }
  }
  int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) {
    int err = errno;
    return IoError("cannot write " + file, err);
  }
  return WriteAndClose(fd, data, file);
}

void AddPut(CLI::App& root) {
  auto* app = root.add_subcommand("put", "Store FILE (or stdin) under KEY");
  struct Flags : Common {
    std::string key, file;
    PutOptions options;
  };
  auto f = std::make_shared<Flags>();
  f->Add(*app);
  app->add_option("KEY", f->key, "Key")->required();
  app->add_option("FILE", f->file, "File to store, or - for stdin (default)");
  app->add_option("--replicas", f->options.replica_count, "Replica count (best effort)")
      ->capture_default_str()
      ->check(CLI::Range(1, 16));
  app->add_option("--soft-pin-ms", f->options.soft_pin_ttl_ms, "Soft pin for this long");
  app->add_flag("--hard-pin", f->options.hard_pin, "Never evict this object");
  app->add_option("--segment", f->options.preferred_segment, "Preferred segment");
  app->callback([f] {
    StatusOr<std::string> data = ReadInput(f->file);
    if (!data.ok()) return SetExitCode(Report("put", data.status()));
    auto client = f->Connect();
    if (!client.ok()) return SetExitCode(Report("put", client.status()));
    auto bytes = std::as_bytes(std::span(data.value()));
    SetExitCode(Report("put", client.value()->Put(f->key, bytes, f->options)));
  });
}

void AddGet(CLI::App& root) {
  auto* app = root.add_subcommand("get", "Write the value of KEY to FILE (or stdout)");
  struct Flags : Common {
    std::string key, file;
  };
  auto f = std::make_shared<Flags>();
  f->Add(*app);
  app->add_option("KEY", f->key, "Key")->required();
  app->add_option("FILE", f->file, "Output file, or - for stdout (default)");
  app->callback([f] {
    auto client = f->Connect();
    if (!client.ok()) return SetExitCode(Report("get", client.status()));
    StatusOr<std::vector<std::byte>> value = client.value()->Get(f->key);
    if (!value.ok()) return SetExitCode(Report("get", value.status()));
    SetExitCode(Report("get", WriteOutput(f->file, value.value())));
  });
}

void AddExists(CLI::App& root) {
  auto* app =
      root.add_subcommand("exists", "Print whether each KEY is stored (exit 1 if any is not)");
  struct Flags : Common {
    std::vector<std::string> keys;
  };
  auto f = std::make_shared<Flags>();
  f->Add(*app);
  app->add_option("KEY", f->keys, "Keys")->required();
  app->callback([f] {
    auto client = f->Connect();
    if (!client.ok()) return SetExitCode(Report("exists", client.status()));
    StatusOr<std::vector<bool>> present = client.value()->BatchExists(f->keys);
    if (!present.ok()) return SetExitCode(Report("exists", present.status()));
    bool all = true;
    for (size_t i = 0; i < f->keys.size(); ++i) {
      std::cout << f->keys[i] << "\t" << (present.value()[i] ? "yes" : "no") << "\n";
      all = all && present.value()[i];
    }
    SetExitCode(all ? 0 : 1);
  });
}

void AddRm(CLI::App& root) {
  auto* app = root.add_subcommand("rm", "Remove KEY (or every key under --prefix)");
  struct Flags : Common {
    std::string key;
    bool prefix = false, force = false;
  };
  auto f = std::make_shared<Flags>();
  f->Add(*app);
  app->add_option("KEY", f->key, "Key (or prefix with --prefix)")->required();
  app->add_flag("--prefix", f->prefix, "Remove every key that starts with KEY");
  app->add_flag("--force", f->force,
                "Remove even if a reader holds a lease (its space is freed when the lease ends)");
  app->callback([f] {
    auto client = f->Connect();
    if (!client.ok()) return SetExitCode(Report("rm", client.status()));
    if (f->prefix) {
      StatusOr<size_t> n = client.value()->RemoveByPrefix(f->key, f->force);
      if (!n.ok()) return SetExitCode(Report("rm", n.status()));
      std::cout << "removed " << n.value() << std::endl;
      if (f->force) return SetExitCode(0);
      // Without --force, keys a reader holds a lease on stay; say so rather
      // than let "removed N" read as "the namespace is empty".
      constexpr size_t kCount = 1000;  // counted exactly up to here
      bool more = false;
      StatusOr<std::vector<std::string>> left = client.value()->List(f->key, kCount, &more);
      if (!left.ok()) return SetExitCode(Report("rm", left.status()));
      const size_t still = left.value().size();
      if (still == 0) return SetExitCode(0);
      const std::string count = more         ? "more than " + std::to_string(still) + " keys"
                                : still == 1 ? "1 key"
                                             : std::to_string(still) + " keys";
      return SetExitCode(
          Report("rm", Status(ErrorCode::kObjectLeased,
                              count + " under '" + f->key +
                                  "' left (leased by readers, or stored meanwhile); retry when the "
                                  "leases end, or --force")));
    }
    Status s = client.value()->Remove(f->key, f->force);
    if (s.code() == ErrorCode::kObjectLeased) {
      s = Status(s.code(),
                 s.message() + " (a reader holds it; retry when the lease ends, or --force)");
    }
    SetExitCode(Report("rm", s));
  });
}

void AddLs(CLI::App& root) {
  auto* app = root.add_subcommand("ls", "List stored keys under PREFIX, in key order");
  struct Flags : Common {
    std::string prefix;
    size_t limit = 1000;
  };
  auto f = std::make_shared<Flags>();
  f->Add(*app);
  app->add_option("PREFIX", f->prefix, "Key prefix (default: all keys)");
  app->add_option("--limit", f->limit,
                  "At most this many keys; stderr says when more are stored (0: the server's "
                  "maximum)")
      ->capture_default_str();
  app->callback([f] {
    auto client = f->Connect();
    if (!client.ok()) return SetExitCode(Report("ls", client.status()));
    bool more = false;
    auto keys = client.value()->List(f->prefix, f->limit, &more);
    if (!keys.ok()) return SetExitCode(Report("ls", keys.status()));
    for (const std::string& k : keys.value()) std::cout << k << "\n";
    std::cout.flush();
    if (more) {
      // Fewer keys than --limit asked for: the master's cap per reply cut it.
      const bool capped = f->limit == 0 || keys.value().size() < f->limit;
      std::cerr << "ls: showing the first " << keys.value().size() << " keys; more are stored ("
                << (capped ? "the master's maximum per reply; list narrower prefixes"
                           : "--limit N for more, 0 for the server's maximum")
                << ")\n";
    }
    SetExitCode(0);
  });
}

uint64_t Counter(const ClusterStat& s, const std::string& name) {
  auto it = s.counters.find(name);
  return it == s.counters.end() ? 0 : it->second;
}

void AddStat(CLI::App& root) {
  auto* app = root.add_subcommand("stat", "Show segments, usage, object count and hit counters");
  auto f = std::make_shared<Common>();
  f->Add(*app);
  app->callback([f] {
    auto client = f->Connect();
    if (!client.ok()) return SetExitCode(Report("stat", client.status()));
    StatusOr<ClusterStat> st = client.value()->Stat();
    if (!st.ok()) return SetExitCode(Report("stat", st.status()));
    const ClusterStat& s = st.value();
    std::cout << "master       " << client.value()->master_address() << "\n"
              << "objects      " << s.objects << " (" << s.pending_puts << " puts pending)\n"
              << "used         " << FormatBytes(s.used_bytes) << " of "
              << FormatBytes(s.capacity_bytes) << "\n"
              << "segments     " << s.segments.size() << "\n";
    for (const SegmentUsage& seg : s.segments) {
      std::cout << "  " << std::left << std::setw(28) << seg.name << " node " << seg.owner_node
                << "  " << FormatBytes(seg.used) << " / " << FormatBytes(seg.capacity) << "  "
                << seg.endpoint << "\n";
    }
    uint64_t hit = Counter(s, "crescent_exact_lookups_total{result=\"hit\"}");
    uint64_t miss = Counter(s, "crescent_exact_lookups_total{result=\"miss\"}");
    uint64_t phit = Counter(s, "crescent_prefix_keys_total{result=\"hit\"}");
    uint64_t pmiss = Counter(s, "crescent_prefix_keys_total{result=\"miss\"}");
    std::cout << "lookups      " << hit << " hits, " << miss << " misses\n"
              << "prefix keys  " << phit << " hits, " << pmiss << " misses\n"
              << "evictions    " << Counter(s, "crescent_evictions_total") << " ("
              << FormatBytes(Counter(s, "crescent_evicted_bytes_total")) << ")\n";
    if (const uint64_t at = Counter(s, "crescent_last_snapshot_unix_ms"); at != 0) {
      std::cout << "snapshot     " << Counter(s, "crescent_last_snapshot_objects") << " objects, "
                << FormatBytes(Counter(s, "crescent_last_snapshot_bytes")) << ", taken at unix ms "
                << at
                << "; log since: " << FormatBytes(Counter(s, "crescent_log_bytes_since_snapshot"))
                << "\n";
    }
    SetExitCode(0);
  });
}

Registrar put_registrar(AddPut);
Registrar get_registrar(AddGet);
Registrar exists_registrar(AddExists);
Registrar rm_registrar(AddRm);
Registrar ls_registrar(AddLs);
Registrar stat_registrar(AddStat);

}  // namespace
}  // namespace crescent::cli
