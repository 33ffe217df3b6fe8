// Trace reader: loads a Mooncake (FAST'25) JSONL request trace into memory once,
// so that every policy × capacity run of the simulator replays the same data.
//
// Each non-empty line is one JSON object: `hash_ids` (required; an array of
// non-negative integers, one per 512-token block, equal ids are the same block),
// and optionally `timestamp` (ms), `input_length` and `output_length` (numbers
// within int64_t; a fraction is dropped).
// Empty and whitespace-only lines are ignored. A malformed line is an error that
// names its 1-based line number, unless `skip_bad` is set: then it is counted in
// `skipped_lines` and left out. A line longer than kMaxTraceLineBytes is always
// an error.
//
// Invariants of a loaded Trace:
//  - hash ids are remapped to dense block ids 0..distinct_blocks()-1 in order of
//    first appearance; block_keys[dense] is the original hash id;
//  - the block ids of request r are blocks[r.first_block, r.first_block + r.num_blocks),
//    and requests are laid out back to back in file order, so `blocks` is the
//    flattened block-reference stream of the whole trace.
//
// This is the only file in the simulator that does I/O; everything downstream
// is a pure function of the Trace.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "crescent/status.h"

namespace crescent::sim {

using BlockId = uint32_t;

struct TraceRequest {
  int64_t timestamp_ms = 0;
  int64_t input_length = 0;
  int64_t output_length = 0;
  uint64_t first_block = 0;  // index into Trace::blocks
  uint32_t num_blocks = 0;
  uint32_t line = 0;  // 1-based line number in the source
};

struct Trace {
  std::string source;  // the path or name it was read from
  std::vector<TraceRequest> requests;
  std::vector<BlockId> blocks;                // the flattened block-reference stream
  std::vector<uint64_t> block_keys;           // dense block id -> original hash id
  uint64_t skipped_lines = 0;                 // malformed lines left out (skip_bad only)
  std::vector<std::string> skipped_examples;  // the first few of their errors

  size_t distinct_blocks() const { return block_keys.size(); }
  uint64_t block_refs() const { return blocks.size(); }
  std::span<const BlockId> BlocksOf(const TraceRequest& r) const {
    return {blocks.data() + r.first_block, r.num_blocks};
  }
};

struct TraceOptions {
  bool skip_bad = false;
  // Called now and then while parsing with (bytes parsed, total bytes).
  std::function<void(size_t, size_t)> progress;
};

// How many skipped-line errors a Trace keeps as examples.
inline constexpr size_t kMaxSkippedExamples = 5;

// The longest line read (about 800k hash ids). A longer one is an error even
// with skip_bad: the input is no JSONL trace (e.g. /dev/zero), and neither
// memory nor time may grow with it.
inline constexpr size_t kMaxTraceLineBytes = size_t{16} << 20;

// Parses trace text. `source` names it in error messages ("source:line: ...").
// Errors: kParseError for a malformed line (without skip_bad).
StatusOr<Trace> ParseTrace(std::string_view text, std::string source,
                           const TraceOptions& options = {});

// Reads and parses the file at `path` (any file: a pipe or device too) line by
// line as it is read, holding one line at a time besides the Trace. Errors:
// kIoError when it cannot be read, otherwise as ParseTrace.
StatusOr<Trace> LoadTrace(const std::string& path, const TraceOptions& options = {});

}  // namespace crescent::sim
