// `crescent replay`: replays a Mooncake JSONL trace against a live cluster as an
// inference engine would (one object per hash id), and reports the live prefix
// hit ratio, throughput, phase latencies and errors by code. Without --master it
// starts an embedded cluster (master + one store node, in this process) sized by
// --capacity-pages / --segment-size. The logic lives in src/replay; this file
// wires flags, the cluster and the output together. See docs/replay.md.
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <system_error>

#include "auth/token_file.h"
#include "cache/eviction_policy.h"
#include "cli/cli_util.h"
#include "cli/client_flags.h"
#include "cli/command.h"
#include "crescent/client.h"
#include "replay/replay_plan.h"
#include "replay/replayer.h"
#include "server/local_cluster.h"
#include "sim/capacity.h"
#include "sim/page_key.h"
#include "sim/progress.h"
#include "sim/trace_reader.h"
#include "transfer/pmem_file.h"

namespace crescent::cli {
namespace {

struct ReplayFlags {
  std::string trace;
  std::string master;
  std::string page_size = "64KiB";
  double speed = 1.0;
  bool max_rate = false;
  uint64_t limit = 0;
  std::string json;
  int streams = 4;
  std::string key_prefix = std::string(sim::kDefaultKeyPrefix);
  bool skip_bad = false;
  std::string beyond_prefix = "read";
  double session_hints = 0;
  uint64_t seed = 1;
  std::string token_file;  // with --master ("": $CRESCENT_TOKEN, else none)
  TlsConfig tls;           // with --master
  // Embedded cluster only.
  std::string segment_size;
  std::string capacity_pages;
  std::string pmem_capacity_pages;    // a persistent tier too (a file in a temporary dir)
  std::string pmem_dir = "/dev/shm";  // where that directory is made
  int pmem_promote_hits = 1;
  bool pmem_promote_keeps_copy = true;
  std::string eviction_policy = kDefaultEvictionPolicy;
  double high_watermark = 1.0;
  double evict_ratio = 0;  // 0: one page
  int64_t lease_ms = 100;
};

int Fail(const std::string& message) {
  std::cerr << "crescent replay: " << message << "\n";
  return 2;
}

// "N" pages or "P%" of the trace's distinct pages.
StatusOr<uint64_t> ParsePages(const std::string& spec, uint64_t distinct) {
  if (!spec.empty() && spec.back() == '%') {
    auto c = sim::ParseCapacity(spec, distinct);
    if (!c.ok()) return c.status();
    return c.value().blocks;
  }
  uint64_t n = 0;
  auto [end, ec] = std::from_chars(spec.data(), spec.data() + spec.size(), n);
  if (ec != std::errc() || end != spec.data() + spec.size() || n == 0) {
    return Status(
        ErrorCode::kInvalidArgument,
        "--capacity-pages must be a positive page count or a percentage, not '" + spec + "'");
  }
  return n;
}

// The trace, loaded with a progress bar; skipped lines are reported on stderr.
StatusOr<sim::Trace> LoadReplayTrace(const ReplayFlags& f, sim::ProgressBar& bar) {
  sim::TraceOptions trace_options;
  trace_options.skip_bad = f.skip_bad;
  trace_options.progress = [&bar](size_t done, size_t total) {
    bar.Update(done, total, "loading trace");
  };
  auto loaded = sim::LoadTrace(f.trace, trace_options);
  bar.Clear();
  if (!loaded.ok()) return loaded.status();
  const sim::Trace& trace = *loaded;
  if (trace.skipped_lines > 0) {
    std::cerr << "crescent replay: skipped " << trace.skipped_lines << " malformed line(s):\n";
    for (const std::string& e : trace.skipped_examples) std::cerr << "  " << e << "\n";
    if (trace.skipped_lines > trace.skipped_examples.size()) std::cerr << "  ...\n";
  }
  if (trace.block_refs() == 0) {
    return Status(ErrorCode::kInvalidArgument, "trace '" + f.trace + "' has no block references");
  }
  return loaded;
}

// An embedded cluster, and the temporary directory of its persistent tier's
// file, removed once the cluster has stopped.
struct EmbeddedCluster {
  std::string pmem_dir;  // empty: none
  std::unique_ptr<server::LocalCluster> cluster;
  std::string description;

  ~EmbeddedCluster() {
    cluster.reset();
    std::error_code ec;
    if (!pmem_dir.empty()) std::filesystem::remove_all(pmem_dir, ec);
  }
};

// The embedded DRAM segment's bytes: --capacity-pages, --segment-size or 1 GiB.
StatusOr<uint64_t> EmbeddedSegmentBytes(const ReplayFlags& f, const sim::Trace& trace,
                                        uint64_t page_size) {
  uint64_t segment = uint64_t{1} << 30;
  if (!f.capacity_pages.empty()) {
    auto pages = ParsePages(f.capacity_pages, trace.distinct_blocks());
    if (!pages.ok()) return pages.status();
    segment = *pages * page_size;
  } else if (!f.segment_size.empty()) {
    auto bytes = ParseByteSize(f.segment_size);
    if (!bytes.ok()) {
      return Status(ErrorCode::kInvalidArgument, "--segment-size: " + bytes.status().message());
    }
    segment = *bytes;
  }
  if (segment < page_size) {
    return Status(ErrorCode::kInvalidArgument, "the segment is smaller than one page");
  }
  return segment;
}

// The embedded master's configuration for a replay of `distinct_pages` pages.
void ConfigureEmbeddedMaster(const ReplayFlags& f, uint64_t page_size, uint64_t segment,
                             uint64_t distinct_pages, master::MasterConfig& c) {
  c.eviction_policy = f.eviction_policy;
  c.high_watermark = f.high_watermark;
  // Default: one page per background round, so the cache stays within one page of full.
  c.evict_ratio = f.evict_ratio > 0 ? f.evict_ratio
                                    : static_cast<double>(page_size) / static_cast<double>(segment);
  c.lease_ms = f.lease_ms;
  c.pmem_promote_hits = f.pmem_promote_hits;
  c.pmem_promote_keeps_copy = f.pmem_promote_keeps_copy;
  // The master and the node are one process with one clock: the fencing
  // grace (clock skew between hosts, 1 s by default) needs to cover only
  // in-flight time. Space read a moment ago (the source of a promotion)
  // then comes free after the lease, not a second later.
  c.capability_grace_ms = 50;
  c.heartbeat_ttl_ms = std::max<int64_t>(c.heartbeat_ttl_ms, 10'000);
  // Pages are allocated back to back with no rounding, so the segment holds
  // exactly segment / page_size pages when the page size is a multiple of 64.
  c.allocation_alignment = page_size % 64 == 0 ? 64 : 8;
  c.bloom_expected_keys = std::max<uint64_t>(distinct_pages + 1, 1024);
}

// --pmem-capacity-pages: a persistent tier of that many pages, a file in a
// fresh directory under --pmem-dir (into `e`). Returns its data bytes.
StatusOr<uint64_t> AddPmemTier(const ReplayFlags& f, const sim::Trace& trace, uint64_t page_size,
                               server::LocalClusterOptions& o, EmbeddedCluster& e) {
  auto pages = ParsePages(f.pmem_capacity_pages, trace.distinct_blocks());
  if (!pages.ok()) {
    return Status(ErrorCode::kInvalidArgument,
                  "--pmem-capacity-pages: " + pages.status().message());
  }
  const uint64_t pmem_bytes = (*pages * page_size + 4095) / 4096 * 4096;
  o.pmem_file_size = pmem_bytes + transfer::PmemFile::kHeaderBytes;
  if (o.pmem_file_size < transfer::PmemFile::kMinFileBytes) {
    return Status(ErrorCode::kInvalidArgument,
                  "--pmem-capacity-pages: the persistent tier must hold at least 1 MiB (" +
                      std::to_string(*pages) + " pages of " + std::to_string(page_size) +
                      " bytes do not)");
  }
  std::string dir_template = f.pmem_dir + "/crescent-replay-pmem-XXXXXX";
  if (mkdtemp(dir_template.data()) == nullptr) {
    return Status(ErrorCode::kInvalidArgument, "cannot make a directory in --pmem-dir " +
                                                   f.pmem_dir + ": " + std::strerror(errno));
  }
  e.pmem_dir = dir_template;
  o.pmem_dir = e.pmem_dir;
  return pmem_bytes;
}

// Starts the embedded cluster (master + one store node) into `e`; a failure's
// message is what to print.
Status StartEmbedded(const ReplayFlags& f, const sim::Trace& trace, uint64_t page_size,
                     const replay::Plan& plan, EmbeddedCluster& e) {
  StatusOr<uint64_t> segment = EmbeddedSegmentBytes(f, trace, page_size);
  if (!segment.ok()) return segment.status();
  server::LocalClusterOptions o;
  ConfigureEmbeddedMaster(f, page_size, *segment, plan.distinct_pages, o.master.config);
  o.store_nodes = 1;
  o.segment_size = *segment;
  uint64_t pmem_bytes = 0;
  if (!f.pmem_capacity_pages.empty()) {
    StatusOr<uint64_t> added = AddPmemTier(f, trace, page_size, o, e);
    if (!added.ok()) return added.status();
    pmem_bytes = *added;
  }
  auto started = server::LocalCluster::Start(o);
  if (!started.ok()) {
    return Status(started.status().code(), "embedded cluster: " + started.status().ToString());
  }
  e.cluster = std::move(started.value());
  e.cluster->WaitPagesWarm();  // untimed: the warmer would compete with the replay
  e.description = "embedded: 1 store node, " + FormatBytes(*segment) + " segment (" +
                  std::to_string(*segment / page_size) + " pages), " + f.eviction_policy +
                  ", high watermark " + std::to_string(f.high_watermark).substr(0, 4) + ", lease " +
                  std::to_string(f.lease_ms) + " ms";
  if (pmem_bytes != 0) {
    e.description += "; persistent tier " + FormatBytes(pmem_bytes) + " (" +
                     std::to_string(pmem_bytes / page_size) + " pages, a file in " + e.pmem_dir +
                     ")";
  }
  return Status::Ok();
}

// What the cluster at --master holds, for the report; fails when it cannot
// be reached.
StatusOr<std::string> DescribeExternal(Client& client, const std::string& address,
                                       uint64_t page_size) {
  auto stat = client.Stat();
  if (!stat.ok()) {
    return Status(stat.status().code(),
                  "cannot reach master " + address + ": " + stat.status().ToString());
  }
  return "master " + client.master_address() + ": " + std::to_string(stat->segments.size()) +
         " segment(s), " + FormatBytes(stat->capacity_bytes) + " (" +
         std::to_string(stat->capacity_bytes / page_size) + " pages)";
}

// The table (or the JSON, with --json -) on stdout, and the JSON to the open
// `json_file` if any; the exit code.
int PrintReport(const ReplayFlags& f, const replay::ReplayReport& report,
                std::ofstream& json_file) {
  if (f.json == "-") {
    std::cout << replay::FormatReplayJson(report);
  } else {
    std::cout << replay::FormatReplayTable(report);
    if (json_file.is_open()) {
      json_file << replay::FormatReplayJson(report);
      json_file.close();
      if (!json_file) return Fail("cannot write '" + f.json + "'");
    }
  }
  std::cout.flush();
  if (report.corrupt_pages > 0) {
    return Fail(std::to_string(report.corrupt_pages) + " page(s) came back with wrong contents");
  }
  return 0;
}

// The flags that are checked before the trace is read; "" when they are fine.
std::string CheckFlags(const ReplayFlags& f, const std::vector<std::string>& embedded_flags_given) {
  if (!f.master.empty() && !embedded_flags_given.empty()) {
    return embedded_flags_given.front() +
           " sizes the embedded cluster; it cannot be used with --master (configure the "
           "running cluster instead, see docs/replay.md)";
  }
  if (!f.segment_size.empty() && !f.capacity_pages.empty()) {
    return "give --segment-size or --capacity-pages, not both";
  }
  return "";
}

int RunReplayCommand(const ReplayFlags& f, const std::vector<std::string>& embedded_flags_given) {
  const bool embedded = f.master.empty();
  if (std::string bad = CheckFlags(f, embedded_flags_given); !bad.empty()) return Fail(bad);
  StatusOr<uint64_t> page_size = ParseByteSize(f.page_size);
  if (!page_size.ok()) return Fail("--page-size: " + page_size.status().message());
  if (*page_size < 8) return Fail("--page-size must be at least 8 bytes");

  sim::ProgressBar bar(stderr, sim::StderrIsTerminal());
  auto loaded = LoadReplayTrace(f, bar);
  if (!loaded.ok()) return Fail(loaded.status().message());
  const sim::Trace& trace = *loaded;

  replay::PlanOptions plan_options;
  plan_options.key_prefix = f.key_prefix;
  plan_options.limit = f.limit;
  plan_options.speed = f.speed;
  plan_options.max_rate = f.max_rate;
  plan_options.session_hints = f.session_hints;
  plan_options.seed = f.seed;
  auto plan = replay::BuildPlan(trace, plan_options);
  if (!plan.ok()) return Fail(plan.status().message());

  // Open the JSON file before the run, so a bad path fails fast.
  std::ofstream json_file;
  if (!f.json.empty() && f.json != "-") {
    json_file.open(f.json, std::ios::binary | std::ios::trunc);
    if (!json_file) {
      const int err = errno;
      return Fail("cannot write '" + f.json + "': " + std::generic_category().message(err));
    }
  }

  EmbeddedCluster cluster;  // declared before the client, which goes first
  std::string address = f.master;
  if (embedded) {
    if (Status s = StartEmbedded(f, trace, *page_size, *plan, cluster); !s.ok()) {
      return Fail(s.message());
    }
    address = cluster.cluster->master_address();
  }

  ClientConfig cc;
  cc.master_address = address;
  if (!embedded) {  // the embedded cluster authenticates nobody
    StatusOr<std::string> token = auth::LoadClientToken(f.token_file);
    if (!token.ok()) return Fail(token.status().message());
    cc.token = std::move(*token);
    cc.tls = f.tls;
  }
  auto client = Client::Connect(cc);
  if (!client.ok()) return Fail("cannot connect: " + client.status().ToString());
  std::string cluster_desc = cluster.description;
  if (!embedded) {
    StatusOr<std::string> desc = DescribeExternal(*client.value(), address, *page_size);
    if (!desc.ok()) return Fail(desc.status().message());
    cluster_desc = *desc;
  }

  replay::ReplayOptions ro;
  ro.page_size = *page_size;
  ro.streams = f.streams;
  ro.beyond_prefix =
      f.beyond_prefix == "skip" ? replay::BeyondPrefix::kSkip : replay::BeyondPrefix::kRead;
  ro.progress = [&bar](uint64_t done, uint64_t total) { bar.Update(done, total, "replaying"); };
  auto result = replay::RunReplay(*client.value(), *plan, ro);
  bar.Clear();
  if (!result.ok()) return Fail(result.status().ToString());
  replay::ReplayReport& report = *result;
  report.trace = f.trace;
  report.master = embedded ? "embedded" : client.value()->master_address();
  report.cluster = cluster_desc;
  report.max_rate = f.max_rate;
  report.speed = f.speed;
  report.skipped_lines = trace.skipped_lines;
  report.session_hints = f.session_hints;
  report.hinted_requests = plan->hinted_requests;
  return PrintReport(f, report, json_file);
}

const Registrar kRegistrar([](CLI::App& app) {
  auto f = std::make_shared<ReplayFlags>();
  CLI::App* cmd = app.add_subcommand(
      "replay", "Replay a Mooncake JSONL trace against a live cluster (one object per hash id)");
  cmd->add_option("--trace", f->trace, "Mooncake FAST'25 JSONL trace file")->required();
  cmd->add_option("--master", f->master,
                  "Master address (host:port, unix:PATH, or etcd://H1:2379,H2:2379/NAME for "
                  "cluster NAME's leader); without it an embedded cluster is started in this "
                  "process");
  AddTokenFileFlag(*cmd, f->token_file);
  AddClientTlsFlags(*cmd, f->tls);
  cmd->add_option("--page-size", f->page_size,
                  std::string("Bytes per page (one page per hash id)") + kSizeHelp)
      ->capture_default_str()
      ->check(ByteSizeCheck());
  auto* speed =
      cmd->add_option("--speed", f->speed, "Replay at X times the trace's timestamps")
          ->capture_default_str()
          ->check(PositiveCheck(" (to send requests as fast as they go, use --max-rate)"));
  cmd->add_flag("--max-rate", f->max_rate,
                "Ignore timestamps; send requests as fast as the "
                "streams go")
      ->excludes(speed);
  cmd->add_option("--session-hints", f->session_hints,
                  "Hint each conversation's last turn as ended with probability F (0 to 1), "
                  "leaf page first, right after the request is served (Client::EndSession), "
                  "drawn exactly as `crescent sim --session-hints F --seed S` draws them")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--seed", f->seed, "Seed of the --session-hints draw")->capture_default_str();
  cmd->add_option("--limit", f->limit, "Replay only the first N requests (0: all)")
      ->capture_default_str()
      ->check(CountCheck());
  cmd->add_option("--json", f->json,
                  "Also write the report as JSON to this file ('-': stdout "
                  "instead of the table)");
  cmd->add_option("--streams", f->streams,
                  "Concurrent request streams; lookups stay in arrival order")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  cmd->add_option("--key-prefix", f->key_prefix, "Page keys are PREFIX-<hash_id>")
      ->capture_default_str();
  cmd->add_flag("--skip-bad", f->skip_bad, "Skip (and count) malformed trace lines");
  cmd->add_option("--beyond-prefix", f->beyond_prefix,
                  "Stored pages after a request's first miss: read (touch them, as the "
                  "simulator does) or skip (only put the missing ones)")
      ->check(CLI::IsMember({"read", "skip"}))
      ->capture_default_str();
  // Embedded cluster.
  auto* seg =
      cmd->add_option("--segment-size", f->segment_size,
                      std::string("Embedded cluster: DRAM segment size (default 1GiB)") + kSizeHelp)
          ->check(ByteSizeCheck());
  auto* cap = cmd->add_option("--capacity-pages", f->capacity_pages,
                              "Embedded cluster: segment of exactly N pages (or P% of the "
                              "trace's distinct pages)");
  auto* pmem = cmd->add_option("--pmem-capacity-pages", f->pmem_capacity_pages,
                               "Embedded cluster: a persistent tier too, of N pages (or P% of "
                               "the trace's distinct pages), a file in a temporary directory; "
                               "the DRAM segment is the first tier (docs/persistent-tier.md)");
  auto* pmem_dir = cmd->add_option("--pmem-dir", f->pmem_dir,
                                   "Embedded cluster: where the persistent tier's file goes (in a "
                                   "directory of its own, removed after the run); tmpfs by "
                                   "default, a DAX or SSD file system to measure one")
                       ->capture_default_str();
  auto* promote = cmd->add_option("--pmem-promote-hits", f->pmem_promote_hits,
                                  "Embedded cluster: reads (within 10 s) that move a persistent-"
                                  "tier page back to DRAM (1: every read, the master's default)")
                      ->capture_default_str()
                      ->check(CLI::Range(1, 1000));
  auto* keep = cmd->add_option("--pmem-promote-keeps-copy", f->pmem_promote_keeps_copy,
                               "Embedded cluster: a promoted page keeps its persistent copy "
                               "(the master's default)")
                   ->capture_default_str();
  auto* pol =
      cmd->add_option("--eviction-policy", f->eviction_policy, "Embedded cluster: eviction policy")
          ->capture_default_str()
          ->check(CLI::IsMember(cache::PolicyNames()));
  auto* hw = cmd->add_option("--high-watermark", f->high_watermark,
                             "Embedded cluster: background eviction starts at this fill")
                 ->capture_default_str()
                 ->check(CLI::Range(0.01, 1.0));
  auto* er = cmd->add_option("--evict-ratio", f->evict_ratio,
                             "Embedded cluster: fraction freed per background round (default: "
                             "one page)")
                 ->check(CLI::Range(0.0, 1.0));
  auto* lease = cmd->add_option("--lease-ms", f->lease_ms,
                                "Embedded cluster: read lease (a leased page cannot be evicted)")
                    ->capture_default_str()
                    ->check(CLI::Range(int64_t{1}, int64_t{86'400'000}));
  std::vector<CLI::Option*> embedded_opts = {seg,     cap, pmem, pmem_dir, promote,
                                             keep,    pol, hw,   er,       lease};
  cmd->callback([f, embedded_opts] {
    std::vector<std::string> given;
    for (CLI::Option* o : embedded_opts) {
      if (o->count() > 0) given.push_back(o->get_name());
    }
    SetExitCode(RunReplayCommand(*f, given));
  });
});

}  // namespace
}  // namespace crescent::cli
