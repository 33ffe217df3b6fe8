// The client verbs put, get, exists, end-session and stat (ls and rm:
// namespace_commands.cc).
// Each connects to the master named by --master (default $CRESCENT_MASTER, else
// 127.0.0.1:50051) and exits 0 on success, 1 when a key is not found, 2 on
// usage or any other error (stdout that cannot be written included), with a
// message on stderr.
#include <chrono>
#include <cstdint>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <thread>

#include "cli/cli_util.h"
#include "cli/client_flags.h"
#include "cli/command.h"
#include "cli/value_io.h"
#include "crescent/client.h"

namespace crescent::cli {
namespace {

// The cluster's state, once it has a segment: while none is mounted (a store
// node still starting) it asks again until `timeout_ms` has passed.
StatusOr<ClusterStat> StatWithASegment(Client& client, int64_t timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    StatusOr<ClusterStat> st = client.Stat();
    if (!st.ok() || st->largest_object > 0) return st;
    if (std::chrono::steady_clock::now() >= deadline) {
      return Status(ErrorCode::kUnavailable, "no segment is mounted on master " +
                                             client.master_address() + " (waited " +
                                             std::to_string(timeout_ms) + " ms)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// --segment must name a mounted segment: a misspelt name would otherwise be
// ignored without a word (the preference is best effort).
Status CheckSegment(const ClusterStat& st, const std::string& name) {
  if (name.empty()) return Status::Ok();
  std::string mounted;
  for (const SegmentUsage& seg : st.segments) {
    if (seg.name == name) return Status::Ok();
    mounted += (mounted.empty() ? "" : ", ") + seg.name;
  }
  return Status(ErrorCode::kSegmentNotFound,
                "--segment " + name + ": no such segment is mounted (mounted: " + mounted + ")");
}

void AddPut(CLI::App& root) {
  auto* app = root.add_subcommand("put", "Store FILE (or stdin) under KEY");
  app->footer(
      "A value larger than the cluster takes (its largest segment) is refused before it is read "
      "(a file, by its size) or once that much has come (stdin, a pipe, a device).");
  struct Flags : ClientFlags {
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
  app->add_option("--soft-pin-ms", f->options.soft_pin_ttl_ms, "Soft pin for this long")
      ->check(CountCheck());
  app->add_flag("--hard-pin", f->options.hard_pin, "Never evict this object");
  app->add_option("--segment", f->options.preferred_segment,
                  "Place it on this segment first when it has room (a name `crescent stat` "
                  "lists)");
  app->callback([f] {
    auto client = f->Connect();
    if (!client.ok()) return SetExitCode(Report("put", client.status()));
    StatusOr<ClusterStat> st = StatWithASegment(*client.value(), f->timeout_ms);
    if (!st.ok()) return SetExitCode(Report("put", st.status()));
    if (Status s = CheckSegment(*st, f->options.preferred_segment); !s.ok()) {
      return SetExitCode(Report("put", s));
    }
    StatusOr<std::string> data = ReadValue(f->file, st->largest_object);
    if (!data.ok()) return SetExitCode(Report("put", data.status()));
    auto bytes = std::as_bytes(std::span(data.value()));
    SetExitCode(Report("put", client.value()->Put(f->key, bytes, f->options)));
  });
}

void AddGet(CLI::App& root) {
  auto* app = root.add_subcommand("get", "Write the value of KEY to FILE (or stdout)");
  app->footer(
      "With --longest-prefix, the value is that of the longest stored key that is a prefix of\n"
      "KEY (KEY itself counts), and that key is printed on stderr, escaped as `crescent ls`\n"
      "prints keys: for keys whose prefixes are keys themselves (token strings, paths).\n"
      "No such key exits as a missing KEY does.");
  struct Flags : ClientFlags {
    std::string key, file;
    bool longest_prefix = false;
  };
  auto f = std::make_shared<Flags>();
  f->Add(*app);
  app->add_option("KEY", f->key, "Key")->required();
  app->add_option("FILE", f->file, "Output file, or - for stdout (default)");
  app->add_flag("--longest-prefix", f->longest_prefix,
                "Get the longest stored key that is a prefix of KEY instead");
  app->callback([f] {
    auto client = f->Connect();
    if (!client.ok()) return SetExitCode(Report("get", client.status()));
    StatusOr<std::vector<std::byte>> value = std::vector<std::byte>();
    if (f->longest_prefix) {
      StatusOr<KeyValue> match = client.value()->GetLongestPrefix(f->key);
      if (!match.ok()) return SetExitCode(Report("get", match.status()));
      std::cerr << EscapeText(match->key) << "\n";
      value = std::move(match->value);
    } else {
      value = client.value()->Get(f->key);
    }
    if (!value.ok()) return SetExitCode(Report("get", value.status()));
    const std::vector<std::byte>& v = value.value();
    SetExitCode(
        Report("get", WriteValue(f->file, {reinterpret_cast<const char*>(v.data()), v.size()})));
  });
}

void AddExists(CLI::App& root) {
  auto* app =
      root.add_subcommand("exists", "Print whether each KEY is stored (exit 1 if any is not)");
  app->footer("Keys are printed escaped as `crescent ls` prints them (see its --help).");
  struct Flags : ClientFlags {
    std::vector<std::string> keys;
  };
  auto f = std::make_shared<Flags>();
  f->Add(*app);
  app->add_option("KEY", f->keys, "Keys")->required();
  app->callback([f] {
    auto client = f->Connect();
    if (!client.ok()) return SetExitCode(Report("exists", client.status()));
    std::vector<StatusOr<bool>> present = client.value()->BatchExists(f->keys);
    for (const StatusOr<bool>& p : present) {
      if (!p.ok()) return SetExitCode(Report("exists", p.status()));
    }
    bool all = true;
    std::string out;
    for (size_t i = 0; i < f->keys.size(); ++i) {
      out += EscapeText(f->keys[i]) + "\t" + (*present[i] ? "yes" : "no") + "\n";
      all = all && *present[i];
    }
    if (Status s = WriteStdout(out); !s.ok()) return SetExitCode(Report("exists", s));
    SetExitCode(all ? 0 : 1);
  });
}

void AddEndSession(CLI::App& root) {
  auto* app = root.add_subcommand(
      "end-session", "Say that the conversation whose pages are KEY... has ended (a session hint)");
  app->footer(
      "Its pages become the cache's preferred victims until another request reads them; nothing "
      "is removed, and pins and read leases hold (docs/engines.md, \"Session hints\"). Prints "
      "how many stored objects were marked (keys not stored are skipped). Many keys: "
      "`crescent ls -0 PREFIX | xargs -0 crescent end-session`.");
  struct Flags : ClientFlags {
    std::vector<std::string> keys;
  };
  auto f = std::make_shared<Flags>();
  f->Add(*app);
  app->add_option("KEY", f->keys, "Keys of the conversation's pages")->required();
  app->callback([f] {
    auto client = f->Connect();
    if (!client.ok()) return SetExitCode(Report("end-session", client.status()));
    StatusOr<size_t> marked = client.value()->EndSession(f->keys);
    if (!marked.ok()) return SetExitCode(Report("end-session", marked.status()));
    SetExitCode(
        Report("end-session", WriteStdout("marked " + std::to_string(marked.value()) + "\n")));
  });
}

uint64_t Counter(const ClusterStat& s, const std::string& name) {
  auto it = s.counters.find(name);
  return it == s.counters.end() ? 0 : it->second;
}

// The tenants the caller may see (docs/security.md, "Quotas"), one a line.
std::string FormatTenants(const ClusterStat& s) {
  if (s.tenants.empty()) return {};
  std::ostringstream out;
  out << "tenants      " << s.tenants.size() << "\n";
  for (const TenantStat& t : s.tenants) {
    out << "  " << std::left << std::setw(20) << EscapeText(t.tenant) << " " << FormatBytes(t.bytes)
        << " of " << (t.quota_bytes ? FormatBytes(t.quota_bytes) : std::string("no quota")) << ", "
        << t.objects << " objects; " << t.hits << " hits, " << t.misses << " misses, "
        << t.evictions << " evictions\n";
  }
  return out.str();
}

// A cluster's masters (docs/ha.md), one a line; nothing for a single master.
std::string FormatMasters(const MastersStat& m) {
  if (m.cluster.empty()) return {};
  std::ostringstream out;
  out << "cluster      " << EscapeText(m.cluster) << " on etcd " << EscapeText(m.etcd) << ", "
      << m.members.size() << " masters, " << m.leader_changes << " leader changes seen\n";
  for (const MasterMemberStat& x : m.members) {
    out << "  " << std::left << std::setw(18) << EscapeText(x.master_id) << " "
        << std::setw(8) << (x.leader ? "leader" : "standby") << " " << EscapeText(x.grpc)
        << "  applied " << x.applied_records << " records";
    if (!x.leader) {
      out << ", " << x.lag_records << " behind";
      if (x.lag_records > 0) out << " for " << std::fixed << std::setprecision(1) << x.lag_seconds << " s";
    }
    out << "\n";
  }
  return out.str();
}

std::string FormatStat(const ClusterStat& s, const std::string& master) {
  std::ostringstream out;
  out << "master       " << EscapeText(master) << "\n"
      << "objects      " << s.objects << " (" << s.pending_puts << " puts pending)\n"
      << "used         " << FormatBytes(s.used_bytes) << " of " << FormatBytes(s.capacity_bytes);
  // Space of removed (or evicted) objects that readers' leases or unfinished
  // puts may still reach: in use, but by no object listed.
  if (s.held_bytes > 0) {
    out << " (" << FormatBytes(s.held_bytes)
        << " of it held for removed objects until their readers' leases end)";
  }
  out << "\n"
      << "largest      " << FormatBytes(s.largest_object) << " (the largest value a put takes)\n"
      << "segments     " << s.segments.size() << "\n";
  for (const SegmentUsage& seg : s.segments) {
    // Names and endpoints are the store nodes' words: escaped like keys.
    out << "  " << std::left << std::setw(28) << EscapeText(seg.name) << " " << EscapeText(seg.tier)
        << " node " << EscapeText(seg.owner_node) << "  " << FormatBytes(seg.used) << " / "
        << FormatBytes(seg.capacity) << "  " << EscapeText(seg.endpoint) << "\n";
  }
  uint64_t hit = Counter(s, "crescent_exact_lookups_total{result=\"hit\"}");
  uint64_t miss = Counter(s, "crescent_exact_lookups_total{result=\"miss\"}");
  uint64_t phit = Counter(s, "crescent_prefix_keys_total{result=\"hit\"}");
  uint64_t pmiss = Counter(s, "crescent_prefix_keys_total{result=\"miss\"}");
  out << FormatTenants(s) << FormatMasters(s.masters);
  out << "lookups      " << hit << " hits, " << miss << " misses\n"
      << "prefix keys  " << phit << " hits, " << pmiss << " misses\n"
      << "evictions    " << Counter(s, "crescent_evictions_total") << " ("
      << FormatBytes(Counter(s, "crescent_evicted_bytes_total")) << ")\n";
  // The persistent tier (docs/persistent-tier.md), when a segment has one.
  uint64_t tier_cap[2] = {0, 0}, tier_used[2] = {0, 0};
  for (const SegmentUsage& seg : s.segments) {
    const size_t t = seg.tier == "pmem" ? 1 : 0;
    tier_cap[t] += seg.capacity;
    tier_used[t] += seg.used;
  }
  if (tier_cap[1] != 0) {
    auto moved = [&](const char* family, const char* direction) {
      return Counter(s, std::string(family) + "{direction=\"" + direction + "\"}");
    };
    out << "tiers        dram " << FormatBytes(tier_used[0]) << " / " << FormatBytes(tier_cap[0])
        << ", pmem " << FormatBytes(tier_used[1]) << " / " << FormatBytes(tier_cap[1])
        << "; reads " << Counter(s, "crescent_tier_reads_total{tier=\"dram\"}") << " dram, "
        << Counter(s, "crescent_tier_reads_total{tier=\"pmem\"}") << " pmem; demoted "
        << moved("crescent_tier_moves_total", "demote") << " ("
        << FormatBytes(moved("crescent_tier_moved_bytes_total", "demote")) << "), promoted "
        << moved("crescent_tier_moves_total", "promote") << " ("
        << FormatBytes(moved("crescent_tier_moved_bytes_total", "promote")) << ")";
    if (const uint64_t pending = Counter(s, "crescent_pmem_verifications_pending"); pending) {
      out << "; " << pending << " to verify";
    }
    out << "\n";
  }
  if (const uint64_t at = Counter(s, "crescent_last_snapshot_unix_ms"); at != 0) {
    out << "snapshot     " << Counter(s, "crescent_last_snapshot_objects") << " objects, "
        << FormatBytes(Counter(s, "crescent_last_snapshot_bytes")) << ", taken at unix ms " << at
        << "; log since: " << FormatBytes(Counter(s, "crescent_log_bytes_since_snapshot"))
        << "\n";
  }
  if (const uint64_t us = Counter(s, "crescent_restore_duration_us"); us != 0) {
    auto dropped = [&](const char* reason) {
      return Counter(s, std::string("crescent_restore_dropped_objects_total{reason=\"") + reason +
                            "\"}");
    };
    out << "restore      " << Counter(s, "crescent_restored_objects") << " objects on "
        << Counter(s, "crescent_restored_segments") << " segments in " << us / 1000
        << " ms to serve";
    if (const uint64_t done = Counter(s, "crescent_restore_completion_us"); done != 0) {
      out << ", completed " << done / 1000 << " ms after";
    }
    out << "; " << Counter(s, "crescent_restore_adopted_segments_total") << " taken back, "
        << Counter(s, "crescent_restored_segments_waiting") << " waiting; dropped "
        << dropped("unmounted") << " unmounted, " << dropped("new_memory") << " new memory, "
        << dropped("expired") << " expired, " << dropped("conflict") << " conflicting\n";
  }
  return out.str();
}

void AddStat(CLI::App& root) {
  auto* app = root.add_subcommand("stat", "Show segments, usage, object count and hit counters");
  auto f = std::make_shared<ClientFlags>();
  f->Add(*app);
  app->callback([f] {
    auto client = f->Connect();
    if (!client.ok()) return SetExitCode(Report("stat", client.status()));
    StatusOr<ClusterStat> st = client.value()->Stat();
    if (!st.ok()) return SetExitCode(Report("stat", st.status()));
    SetExitCode(Report("stat", WriteStdout(FormatStat(*st, client.value()->master_address()))));
  });
}

Registrar put_registrar(AddPut);
Registrar get_registrar(AddGet);
Registrar exists_registrar(AddExists);
Registrar end_session_registrar(AddEndSession);
Registrar stat_registrar(AddStat);

}  // namespace
}  // namespace crescent::cli
