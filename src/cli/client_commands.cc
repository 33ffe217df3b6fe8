// The client verbs: put, get, exists, rm, ls, stat. Each connects to the master
// named by --master (default $CRESCENT_MASTER, else 127.0.0.1:50051) and exits 0
// on success, 1 when a key is not found, 2 on usage or any other error, with a
// message on stderr.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <iterator>
#include <sstream>

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
    app.add_option("--timeout-ms", timeout_ms, "Per-call timeout")->capture_default_str();
  }

  StatusOr<std::unique_ptr<Client>> Connect() const {
    ClientConfig c;
    c.master_address = master;
    c.rpc_timeout_ms = timeout_ms;
    c.transfer_timeout_ms = timeout_ms;
    return Client::Connect(c);
  }
};

StatusOr<std::string> ReadInput(const std::string& file) {
  std::string data;
  if (file.empty() || file == "-") {
    std::ios::sync_with_stdio(false);
    data.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    return data;
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) return Status(ErrorCode::kIoError, "cannot read " + file);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Status WriteOutput(const std::string& file, const std::vector<std::byte>& data) {
  if (file.empty() || file == "-") {
    size_t done = 0;
    while (done < data.size()) {
      ssize_t n = ::write(STDOUT_FILENO, data.data() + done, data.size() - done);
      if (n <= 0) return Status(ErrorCode::kIoError, "cannot write to stdout");
      done += static_cast<size_t>(n);
    }
    return Status::Ok();
  }
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
  if (!out) return Status(ErrorCode::kIoError, "cannot write " + file);
  return Status::Ok();
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
  auto* app = root.add_subcommand("exists", "Print whether each KEY is stored (exit 1 if any is not)");
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
  app->add_flag("--force", f->force, "Remove even if a reader holds a lease");
  app->callback([f] {
    auto client = f->Connect();
    if (!client.ok()) return SetExitCode(Report("rm", client.status()));
    if (f->prefix) {
      StatusOr<size_t> n = client.value()->RemoveByPrefix(f->key, f->force);
      if (!n.ok()) return SetExitCode(Report("rm", n.status()));
      std::cout << "removed " << n.value() << "\n";
      return SetExitCode(0);
    }
    Status s = client.value()->Remove(f->key, f->force);
    if (s.code() == ErrorCode::kObjectLeased) {
      s = Status(s.code(), s.message() + " (a reader holds it; retry when the lease ends, or --force)");
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
  app->add_option("--limit", f->limit, "At most this many keys (0: the server's maximum)")
      ->capture_default_str();
  app->callback([f] {
    auto client = f->Connect();
    if (!client.ok()) return SetExitCode(Report("ls", client.status()));
    auto keys = client.value()->List(f->prefix, f->limit);
    if (!keys.ok()) return SetExitCode(Report("ls", keys.status()));
    for (const std::string& k : keys.value()) std::cout << k << "\n";
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
