// `crescent sim`: replays a Mooncake JSONL trace through eviction policies at
// several capacities and prints prefix hit ratios (table or JSON lines), with an
// optional SVG hit-ratio curve and, for the adaptive policy, an SVG timeline of
// its candidates and of the one it followed. The trace is loaded once and shared by every
// policy × capacity run; all the logic lives in src/sim, this file only wires
// flags, timing and output together.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <system_error>
#include <tuple>
#include <utility>
#include <vector>

#include "cache/adaptive_policy.h"
#include "cli/command.h"
#include "sim/capacity.h"
#include "sim/cluster_scale.h"
#include "sim/master_replay.h"
#include "sim/mrc_plot.h"
#include "sim/page_key.h"
#include "sim/progress.h"
#include "sim/report.h"
#include "sim/session_hints.h"
#include "sim/simulator.h"
#include "sim/timeline_plot.h"
#include "sim/trace_reader.h"

namespace crescent::cli {
namespace {

struct SimFlags {
  std::string trace;
  std::string capacity = "5%,10%";
  std::string policy = "lru";
  bool json = false;
  std::string plot;
  std::string timeline;
  bool skip_bad = false;
  int s3fifo_threshold = 1;
  uint64_t seed = 1;
  double session_hints = 0;
  std::string engine = "policy";
  std::string key_prefix = std::string(sim::kDefaultKeyPrefix);
  uint32_t copies = 1;
  uint32_t nodes = 0;  // 0: no node model
};

int Fail(const std::string& message) {
  std::cerr << "crescent sim: " << message << "\n";
  return 2;
}

// Splits "a, b,c" into names, dropping repeats; an empty name is an error.
bool SplitPolicies(const std::string& list, std::vector<std::string>* out, std::string* error) {
  size_t start = 0;
  while (true) {
    size_t comma = list.find(',', start);
    std::string name = list.substr(start, comma == std::string::npos ? comma : comma - start);
    name.erase(0, name.find_first_not_of(" \t"));
    name.erase(name.find_last_not_of(" \t") + 1);
    if (name.empty()) {
      *error = "empty policy name in '" + list + "'";
      return false;
    }
    if (std::find(out->begin(), out->end(), name) == out->end()) out->push_back(name);
    if (comma == std::string::npos) return true;
    start = comma + 1;
  }
}

int RunSim(const SimFlags& flags) {
  sim::SimReport report;
  std::string error;
  if (!SplitPolicies(flags.policy, &report.policies, &error)) return Fail(error);
  for (const std::string& name : report.policies) {
    if (Status s = sim::CheckSimPolicyName(name); !s.ok()) return Fail(s.message());
  }
  const bool through_master = flags.engine == "master";
  if (through_master && std::find(report.policies.begin(), report.policies.end(),
                                  std::string(sim::kBeladyName)) != report.policies.end()) {
    return Fail("belady is offline-only; it cannot run with --engine master");
  }
  if (!flags.timeline.empty()) {
    if (std::find(report.policies.begin(), report.policies.end(), "adaptive") ==
        report.policies.end()) {
      return Fail("--timeline plots the adaptive policy; add adaptive to --policy");
    }
    if (through_master) return Fail("--timeline needs --engine policy");
  }
  if (flags.nodes > 0 && (through_master || flags.json)) {
    return Fail("--nodes prints its own lines: it needs --engine policy and no --json");
  }

  sim::ProgressBar bar(stderr, sim::StderrIsTerminal());
  sim::TraceOptions trace_options;
  trace_options.skip_bad = flags.skip_bad;
  trace_options.progress = [&bar](size_t done, size_t total) {
    bar.Update(done, total, "loading trace");
  };
  auto loaded = sim::LoadTrace(flags.trace, trace_options);
  bar.Clear();
  if (!loaded.ok()) return Fail(loaded.status().message());
  if (flags.copies > 1) *loaded = sim::ScaleTrace(*loaded, flags.copies);
  const sim::Trace& trace = *loaded;
  if (trace.skipped_lines > 0) {
    std::cerr << "crescent sim: skipped " << trace.skipped_lines << " malformed line(s):\n";
    for (const std::string& e : trace.skipped_examples) std::cerr << "  " << e << "\n";
    if (trace.skipped_lines > trace.skipped_examples.size()) std::cerr << "  ...\n";
  }
  if (trace.block_refs() == 0) return Fail("trace '" + flags.trace + "' has no block references");

  // Open the plot files before the runs, so a bad path fails fast and prints nothing.
  std::ofstream plot;
  std::ofstream timeline;
  for (auto [path, file] : {std::pair{&flags.plot, &plot}, std::pair{&flags.timeline, &timeline}}) {
    if (path->empty()) continue;
    file->open(*path, std::ios::binary | std::ios::trunc);
    if (!*file) {
      const int err = errno;
      return Fail("cannot write plot '" + *path + "': " + std::generic_category().message(err));
    }
  }

  auto capacities = sim::ParseCapacities(flags.capacity, trace.distinct_blocks());
  if (!capacities.ok()) return Fail(capacities.status().message());

  report.trace = flags.trace;
  report.requests = trace.requests.size();
  report.block_refs = trace.block_refs();
  report.distinct_blocks = trace.distinct_blocks();
  report.skipped_lines = trace.skipped_lines;
  report.capacities = std::move(*capacities);
  if (through_master && flags.session_hints > 0) {
    return Fail("--session-hints needs --engine policy");
  }
  const std::vector<bool> session_ends =
      flags.session_hints > 0 ? sim::SessionHints(trace, flags.session_hints, flags.seed)
                              : std::vector<bool>{};

  const uint64_t total_refs =
      trace.block_refs() * report.policies.size() * report.capacities.size();
  uint64_t refs_before = 0;
  std::string node_lines;
  for (const std::string& name : report.policies) {
    for (const sim::Capacity& cap : report.capacities) {
      const std::string label = name + " @ " + cap.label;
      const auto start = std::chrono::steady_clock::now();
      cache::PolicyOptions options;
      options.capacity = cap.blocks;
      options.s3fifo_move_threshold = flags.s3fifo_threshold;
      options.seed = flags.seed;
      auto policy = sim::MakeSimPolicy(trace, name, options);
      if (!policy.ok()) return Fail(policy.status().message());
      sim::RunResult run;
      auto progress = [&](uint64_t done) { bar.Update(refs_before + done, total_refs, label); };
      if (through_master) {
        auto replayed = sim::ReplayThroughMaster(trace, cap.blocks, name, flags.s3fifo_threshold,
                                                 progress, flags.key_prefix);
        if (!replayed.ok()) return Fail(name + ": " + replayed.status().ToString());
        run.stats = *replayed;
      } else {
        std::unique_ptr<cache::EvictionPolicy> bare = std::move(*policy);
        std::unique_ptr<sim::NodeLoadPolicy> nodes;
        if (flags.nodes > 0)
          nodes = std::make_unique<sim::NodeLoadPolicy>(std::move(bare), flags.nodes);
        cache::EvictionPolicy& used = nodes ? nodes->inner() : *bare;
        run.stats = sim::Simulate(trace, cap.blocks, nodes ? *nodes : used, progress,
                                  flags.key_prefix, session_ends);
        if (const auto* adaptive = dynamic_cast<const cache::AdaptivePolicy*>(&used)) {
          run.schedule = sim::TraceOf(*adaptive);
        }
        if (nodes) node_lines += sim::FormatNodeLoads(label, *nodes, run.stats, trace);
      }
      run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      refs_before += trace.block_refs();
      report.runs.push_back(run);
    }
  }
  bar.Clear();

  if (through_master && !flags.json)
    std::cout << "engine: master (replayed through MasterService)\n";
  std::cout << (flags.json ? sim::FormatJsonLines(report) : sim::FormatTable(report));
  std::cout << node_lines;
  std::cout.flush();
  for (auto [path, file, svg] : {std::tuple{&flags.plot, &plot, &sim::RenderHitRatioSvg},
                                 std::tuple{&flags.timeline, &timeline, &sim::RenderTimelineSvg}}) {
    if (!file->is_open()) continue;
    *file << svg(report);
    file->close();
    if (!*file) return Fail("cannot write plot '" + *path + "'");
    if (!flags.json) std::cout << "wrote " << *path << "\n";
  }
  return 0;
}

const Registrar kRegistrar([](CLI::App& app) {
  auto flags = std::make_shared<SimFlags>();
  CLI::App* cmd = app.add_subcommand("sim",
                                     "Replay a Mooncake JSONL trace through eviction "
                                     "policies and report prefix hit ratios");
  cmd->add_option("--trace", flags->trace, "Mooncake FAST'25 JSONL trace file")->required();
  cmd->add_option("--capacity", flags->capacity,
                  "Comma-separated capacities: block counts or percentages of the trace's "
                  "distinct blocks (e.g. 5%,10%,4096)")
      ->capture_default_str();
  std::string names;
  for (const std::string& name : sim::SimPolicyNames()) names += (names.empty() ? "" : ", ") + name;
  cmd->add_option("--policy", flags->policy, "Comma-separated policies: " + names)
      ->capture_default_str();
  cmd->add_flag("--json", flags->json, "Print one JSON object per policy x capacity run");
  cmd->add_option("--plot", flags->plot, "Write an SVG hit-ratio curve to this file");
  cmd->add_option("--timeline", flags->timeline,
                  "Write an SVG timeline of each adaptive run to this file: every candidate's "
                  "windowed hit ratio in its miniature simulation, and the one the live cache "
                  "followed");
  cmd->add_flag("--skip-bad", flags->skip_bad, "Skip (and count) malformed trace lines");
  cmd->add_option("--s3fifo-threshold", flags->s3fifo_threshold,
                  "s3fifo: frequency at which an object leaving the small FIFO moves to main")
      ->check(CLI::Range(1, 2))
      ->capture_default_str();
  cmd->add_option("--seed", flags->seed,
                  "Seed of the randomised policies (learned's eviction sampler, and adaptive's "
                  "candidates); the policy engine only")
      ->capture_default_str();
  cmd->add_option("--session-hints", flags->session_hints,
                  "Hint this fraction (0 to 1, drawn with --seed) of the trace's last turns as "
                  "ended sessions right after they are served (EvictionPolicy::EndSession): a "
                  "last turn is a request that no later request extends (starts with all its "
                  "hash_ids but the last); the policy engine only")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--key-prefix", flags->key_prefix,
                  "Name pages PREFIX-<hash_id>, as `crescent replay --key-prefix` does: the key "
                  "hashes are what the learned and adaptive policies sample and remember")
      ->check([](const std::string& s) { return s.empty() ? "must not be empty" : ""; })
      ->capture_default_str();
  cmd->add_option("--engine", flags->engine,
                  "policy: drive the bare policy (the simulator); master: replay through the "
                  "real master engine (PutStart/PutEnd/GetReplicaList/BatchQueryPrefix) as a "
                  "consistency check")
      ->check(CLI::IsMember({"policy", "master"}))
      ->capture_default_str();
  cmd->add_option("--copies", flags->copies,
                  "Scale the trace: K copies of it as disjoint user populations (no page "
                  "shared between copies), interleaved request by request in timestamp order; "
                  "percentages in --capacity are of the scaled footprint")
      ->check(CLI::Range(1u, 4096u))
      ->capture_default_str();
  cmd->add_option("--nodes", flags->nodes,
                  "Model N equal store nodes under the one master: pages placed as the master "
                  "places them (most free space), and per run a line with the busiest node's "
                  "reads, writes and pages held over the mean, and the master's requests/s and "
                  "keys/s at the trace's pace; 0: no node model")
      ->check(CLI::Range(0u, 65536u))
      ->capture_default_str();
  cmd->callback([flags] { SetExitCode(RunSim(*flags)); });
});

}  // namespace
}  // namespace crescent::cli
