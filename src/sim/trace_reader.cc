#include "sim/trace_reader.h"

#include <absl/container/flat_hash_map.h>

#include <cerrno>
#include <cstdio>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <system_error>

namespace crescent::sim {

namespace {

using Json = nlohmann::json;

constexpr size_t kProgressEveryBytes = size_t{1} << 20;

// What one valid line contributes, before its hash ids are remapped. Parsing a
// line completely before committing anything is what lets a skipped line leave
// no trace (e.g. half of its ids in the dense map).
struct ParsedLine {
  int64_t timestamp_ms = 0;
  int64_t input_length = 0;
  int64_t output_length = 0;
  std::vector<uint64_t> keys;
};

// Reads an optional numeric field. Absent means 0; present but not a number,
// or outside int64_t (a fraction is dropped), is an error.
std::optional<std::string> ReadOptionalNumber(const Json& obj, const char* key, int64_t* out) {
  auto it = obj.find(key);
  if (it == obj.end()) return std::nullopt;
  auto out_of_range = [key] { return std::string("'") + key + "' is out of range"; };
  if (it->is_number_unsigned()) {  // also is_number_integer(): test it first
    const uint64_t v = it->get<uint64_t>();
    if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return out_of_range();
    *out = static_cast<int64_t>(v);
  } else if (it->is_number_integer()) {
    *out = it->get<int64_t>();
  } else if (it->is_number_float()) {
    // Converting a double outside [-2^63, 2^63) to int64_t is undefined.
    constexpr double kTwo63 = 9223372036854775808.0;
    const double v = it->get<double>();
    if (!(v >= -kTwo63 && v < kTwo63)) return out_of_range();
    *out = static_cast<int64_t>(v);
  } else {
    return std::string("'") + key + "' is not a number";
  }
  return std::nullopt;
}

// Returns an error message (without the "source:line: " prefix) or nullopt.
std::optional<std::string> ParseLine(std::string_view text, ParsedLine* out) {
  Json obj;
  try {
    obj = Json::parse(text.begin(), text.end());
  } catch (const Json::exception& e) {
    // Syntax errors are parse_error; a number too large for a double is
    // out_of_range. e.what() is "[json.exception.parse_error.101] parse error at ...".
    std::string_view what = e.what();
    if (auto pos = what.find("] "); pos != std::string_view::npos) what.remove_prefix(pos + 2);
    return "invalid JSON: " + std::string(what);
  }
  if (!obj.is_object()) return std::string("expected a JSON object");

  auto ids = obj.find("hash_ids");
  if (ids == obj.end()) return std::string("missing 'hash_ids'");
  if (!ids->is_array()) return std::string("'hash_ids' is not an array");
  out->keys.clear();
  out->keys.reserve(ids->size());
  for (size_t i = 0; i < ids->size(); ++i) {
    const Json& v = (*ids)[i];
    if (v.is_number_unsigned()) {
      out->keys.push_back(v.get<uint64_t>());
    } else if (v.is_number_integer()) {  // signed means negative here
      return "hash_ids[" + std::to_string(i) + "] is negative";
    } else {
      return "hash_ids[" + std::to_string(i) + "] is not an integer";
    }
  }
  if (out->keys.size() > std::numeric_limits<uint32_t>::max()) {
    return std::string("too many hash_ids in one request");
  }
  if (auto err = ReadOptionalNumber(obj, "timestamp", &out->timestamp_ms)) return err;
  if (auto err = ReadOptionalNumber(obj, "input_length", &out->input_length)) return err;
  if (auto err = ReadOptionalNumber(obj, "output_length", &out->output_length)) return err;
  return std::nullopt;
}

bool IsBlank(std::string_view line) {
  for (char c : line) {
    if (c != ' ' && c != '\t' && c != '\r') return false;
  }
  return true;
}

}  // namespace

StatusOr<Trace> ParseTrace(std::string_view text, std::string source, const TraceOptions& options) {
  Trace trace;
  trace.source = std::move(source);
  absl::flat_hash_map<uint64_t, BlockId> dense;
  ParsedLine parsed;
  size_t pos = 0;
  size_t next_progress = kProgressEveryBytes;
  uint64_t line_no = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (options.progress && pos >= next_progress) {
      options.progress(std::min(pos, text.size()), text.size());
      next_progress = pos + kProgressEveryBytes;
    }
    if (IsBlank(line)) continue;

    if (auto err = ParseLine(line, &parsed)) {
      std::string message = trace.source + ":" + std::to_string(line_no) + ": " + *err;
      if (!options.skip_bad) return Status(ErrorCode::kParseError, std::move(message));
      ++trace.skipped_lines;
      if (trace.skipped_examples.size() < kMaxSkippedExamples) {
        trace.skipped_examples.push_back(std::move(message));
      }
      continue;
    }
    if (line_no > std::numeric_limits<uint32_t>::max() ||
        dense.size() + parsed.keys.size() > std::numeric_limits<BlockId>::max()) {
      return Status(ErrorCode::kInvalidArgument, trace.source + ": trace too large");
    }

    TraceRequest req;
    req.timestamp_ms = parsed.timestamp_ms;
    req.input_length = parsed.input_length;
    req.output_length = parsed.output_length;
    req.first_block = trace.blocks.size();
    req.num_blocks = static_cast<uint32_t>(parsed.keys.size());
    req.line = static_cast<uint32_t>(line_no);
    for (uint64_t key : parsed.keys) {
      auto [it, inserted] = dense.try_emplace(key, static_cast<BlockId>(trace.block_keys.size()));
      if (inserted) trace.block_keys.push_back(key);
      trace.blocks.push_back(it->second);
    }
    trace.requests.push_back(req);
  }
  if (options.progress) options.progress(text.size(), text.size());
  return trace;
}

StatusOr<Trace> LoadTrace(const std::string& path, const TraceOptions& options) {
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) {
    const int err = errno;
    return Status(ErrorCode::kIoError,
                  "cannot open trace '" + path + "': " + std::generic_category().message(err));
  }
  std::string text;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), file.get())) > 0) text.append(buf, n);
  if (std::ferror(file.get())) {
    const int err = errno;
    return Status(ErrorCode::kIoError,
                  "cannot read trace '" + path + "': " + std::generic_category().message(err));
  }
  return ParseTrace(text, path, options);
}

}  // namespace crescent::sim
