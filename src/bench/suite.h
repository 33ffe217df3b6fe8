// Rendering and judging for `crescent bench`: the tables each subcommand prints,
// the machine description, and the target checks (ratios from one run).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/results.h"
#include "bench/workloads.h"

namespace crescent::bench {

// nproc, CPU model, kernel, load averages (from /proc).
nlohmann::json DescribeMachine();
std::string MachineLine(const nlohmann::json& machine);

std::string RenderPutGet(const std::vector<PhaseResult>& rows);
std::string RenderExists(const std::vector<PhaseResult>& rows);
std::string RenderBaseline(const std::vector<PhaseResult>& rows);
// The floors: raw one-object shapes (raw_shapes.h), round trips (round_trips.h).
std::string RenderRawShapes(const std::vector<PhaseResult>& rows);
std::string RenderRoundTrips(const std::vector<PhaseResult>& rows);
// Crescent rows beside the Redis row of the same op, size/batch, miss and clients.
std::string RenderVersus(const std::vector<PhaseResult>& crescent,
                         const std::vector<PhaseResult>& redis);

// How each reference was measured, printed under its table (and kept in the
// JSON), so that a ratio says what it compares: sizes, threads, cache state
// of source and destination, and request/response or pipelining.
std::string HowBaselineMeasured(const WorkloadOptions& o);
std::string HowMemcpyBesideGetsMeasured(const WorkloadOptions& o);
std::string HowRedisMeasured(const WorkloadOptions& o, const std::string& version);
// The raw loopback stream run beside each repetition's TCP batch phases (driver.h).
std::string HowStreamBesideBatchesMeasured(const WorkloadOptions& o);

// Finds the row with these labels (nullptr when absent).
const PhaseResult* Find(const std::vector<PhaseResult>& rows, const std::string& system,
                        const std::string& op, uint64_t size, int clients, int batch = -1,
                        double miss = -1);

// The targets, for whatever rows were measured:
//  TCP put/get of 1–4 MiB: ≥0.85× raw TCP (same stream count), ≥1.2× Redis;
//  shm get: ≥0.8× memcpy (the memcpy of the same shape measured beside each
//  repetition where there is one, else the baseline's), ≥1.5× Redis GET;
//  exists of 128 keys: ≥1× Redis pipelined EXISTS keys/s.
std::vector<TargetCheck> CheckTargets(const std::vector<PhaseResult>& all);

}  // namespace crescent::bench
