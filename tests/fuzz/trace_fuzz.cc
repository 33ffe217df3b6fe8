// Fuzzes the simulator's input parsers: the JSONL trace reader
// (sim/trace_reader.h) and the capacity specs (sim/capacity.h).
//
// Invariants of ParseTrace, checked on every trace it returns:
//  - requests lie back to back over `blocks` in line order, and every block id
//    is dense (< distinct_blocks), first seen in increasing order, and names a
//    distinct original hash id;
//  - with skip_bad, every non-blank line is either a request or a skipped line,
//    and a strict parse that succeeds gives the same trace with nothing skipped;
//  - progress reports never go backwards and end at (total, total).
// Of ParseCapacity: an accepted spec is 1..distinct blocks, labelled with the
// trimmed spec; a plain count is taken as is.
#include <algorithm>
#include <string>
#include <unordered_set>

#include "fuzz_support.h"
#include "sim/capacity.h"
#include "sim/trace_reader.h"

using crescent::ErrorCode;
using crescent::fuzz::FuzzInput;
namespace sim = crescent::sim;

namespace {

bool IsBlankLine(std::string_view line) {
  return std::all_of(line.begin(), line.end(),
                     [](char c) { return c == ' ' || c == '\t' || c == '\r'; });
}

size_t NonBlankLines(std::string_view text) {
  size_t n = 0;
  for (size_t pos = 0; pos < text.size();) {
    size_t end = std::min(text.find('\n', pos), text.size());
    n += !IsBlankLine(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return n;
}

void CheckTrace(const sim::Trace& t) {
  uint64_t next_block = 0;
  uint32_t last_line = 0;
  for (const sim::TraceRequest& r : t.requests) {
    FUZZ_CHECK(r.first_block == next_block);
    FUZZ_CHECK(r.line > last_line);
    next_block += r.num_blocks;
    last_line = r.line;
  }
  FUZZ_CHECK(next_block == t.blocks.size());
  sim::BlockId next_new = 0;
  for (sim::BlockId b : t.blocks) {
    FUZZ_CHECK(b < t.distinct_blocks());
    FUZZ_CHECK(b <= next_new);  // a new id is always the next one
    if (b == next_new) ++next_new;
  }
  FUZZ_CHECK(next_new == t.distinct_blocks());
  std::unordered_set<uint64_t> keys(t.block_keys.begin(), t.block_keys.end());
  FUZZ_CHECK(keys.size() == t.block_keys.size());
  FUZZ_CHECK(t.skipped_examples.size() ==
             std::min<uint64_t>(t.skipped_lines, sim::kMaxSkippedExamples));
}

bool SameRequests(const sim::Trace& a, const sim::Trace& b) {
  if (a.requests.size() != b.requests.size()) return false;
  for (size_t i = 0; i < a.requests.size(); ++i) {
    const sim::TraceRequest& x = a.requests[i];
    const sim::TraceRequest& y = b.requests[i];
    if (x.timestamp_ms != y.timestamp_ms || x.input_length != y.input_length ||
        x.output_length != y.output_length || x.first_block != y.first_block ||
        x.num_blocks != y.num_blocks || x.line != y.line) {
      return false;
    }
  }
  return a.blocks == b.blocks && a.block_keys == b.block_keys;
}

void FuzzTrace(std::string_view text) {
  size_t last_done = 0;
  bool finished = false;
  sim::TraceOptions lenient;
  lenient.skip_bad = true;
  lenient.progress = [&](size_t done, size_t total) {
    FUZZ_CHECK(total == text.size());
    FUZZ_CHECK(done >= last_done && done <= total);
    last_done = done;
    finished = done == total;
  };
  auto loose = sim::ParseTrace(text, "fuzz", lenient);
  FUZZ_CHECK(loose.ok());  // fuzz inputs are far below the size limits
  FUZZ_CHECK(finished);
  CheckTrace(*loose);
  FUZZ_CHECK(loose->requests.size() + loose->skipped_lines == NonBlankLines(text));

  auto strict = sim::ParseTrace(text, "fuzz");
  if (strict.ok()) {
    CheckTrace(*strict);
    FUZZ_CHECK(loose->skipped_lines == 0);
    FUZZ_CHECK(SameRequests(*strict, *loose));
  } else {
    FUZZ_CHECK(strict.status().code() == ErrorCode::kParseError);
    FUZZ_CHECK(loose->skipped_lines > 0);
  }
}

std::string_view Trim(std::string_view s) {
  auto space = [](char c) { return c == ' ' || (c >= '\t' && c <= '\r'); };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

void FuzzCapacity(const std::string& spec, uint64_t distinct) {
  auto cap = sim::ParseCapacity(spec, distinct);
  std::string_view trimmed = Trim(spec);
  bool plain =
      !trimmed.empty() && trimmed.size() <= 18 &&
      std::all_of(trimmed.begin(), trimmed.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (plain) {
    uint64_t value = std::stoull(std::string(trimmed));
    FUZZ_CHECK(cap.ok() == (value >= 1 && value <= distinct));
    if (cap.ok()) FUZZ_CHECK(cap->blocks == value);
  }
  if (!cap.ok()) {
    FUZZ_CHECK(cap.status().code() == ErrorCode::kInvalidArgument);
    return;
  }
  FUZZ_CHECK(cap->blocks >= 1 && cap->blocks <= distinct);
  FUZZ_CHECK(cap->label == trimmed);

  // The same spec twice in a list: two equal entries.
  auto list = sim::ParseCapacities(spec + "," + spec, distinct);
  FUZZ_CHECK(list.ok() && list->size() == 2);
  FUZZ_CHECK((*list)[0].blocks == cap->blocks && (*list)[1].blocks == cap->blocks);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzInput in(data, size);
  uint8_t which = in.Take<uint8_t>();
  if (which & 1) {
    // Mostly small block counts, so that percentages land on both sides of 1.
    uint64_t distinct = which & 2 ? in.Take<uint64_t>() : in.Take<uint16_t>();
    std::string spec = in.TakeString(40);
    if (spec.find(',') == std::string::npos) FuzzCapacity(spec, distinct);
    return 0;
  }
  FuzzTrace(in.Rest());
  return 0;
}
