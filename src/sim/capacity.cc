#include "sim/capacity.h"

#include <cctype>

namespace crescent::sim {

namespace {

// 128-bit arithmetic for exact percentages (a GCC/Clang extension).
__extension__ using Uint128 = unsigned __int128;

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Digits of a decimal number without sign or exponent: "12", "2.5", ".5".
// Returns false if `s` is not one, or has more than 18 significant digits.
bool ParseDecimal(std::string_view s, uint64_t* mantissa, uint64_t* scale) {
  *mantissa = 0;
  *scale = 1;
  bool seen_dot = false;
  int digits = 0;
  for (char c : s) {
    if (c == '.' && !seen_dot) {
      seen_dot = true;
    } else if (c >= '0' && c <= '9') {
      if (++digits > 18) return false;
      *mantissa = *mantissa * 10 + static_cast<uint64_t>(c - '0');
      if (seen_dot) *scale *= 10;
    } else {
      return false;
    }
  }
  return digits > 0;
}

Status Invalid(std::string_view spec, const std::string& why) {
  return Status(ErrorCode::kInvalidArgument,
                "invalid capacity '" + std::string(spec) + "': " + why);
}

}  // namespace

StatusOr<Capacity> ParseCapacity(std::string_view raw, uint64_t distinct_blocks) {
  std::string_view spec = Trim(raw);
  if (spec.empty()) return Invalid(raw, "empty");
  const bool percent = spec.back() == '%';
  std::string_view number = percent ? Trim(spec.substr(0, spec.size() - 1)) : spec;
  if (!number.empty() && number.front() == '-') {
    return Invalid(spec, "must be positive");
  }
  uint64_t mantissa = 0;
  uint64_t scale = 1;
  if (!ParseDecimal(number, &mantissa, &scale) || (!percent && scale != 1)) {
    return Invalid(spec, "expected a positive block count (4096) or a percentage (5%)");
  }
  if (mantissa == 0) return Invalid(spec, "must be positive");

  uint64_t blocks = mantissa;
  if (percent) {
    // floor(mantissa / scale / 100 * distinct), exactly; 128 bits cannot overflow
    // since mantissa < 10^18 and distinct < 2^64.
    const Uint128 num = static_cast<Uint128>(mantissa) * distinct_blocks;
    const Uint128 q = num / (static_cast<Uint128>(scale) * 100);
    blocks = q > distinct_blocks ? distinct_blocks + 1 : static_cast<uint64_t>(q);
    if (blocks == 0) {
      return Invalid(spec, "is 0 blocks of the " + std::to_string(distinct_blocks) +
                               " distinct blocks in the trace");
    }
  }
  if (blocks > distinct_blocks) {
    return Invalid(
        spec, "exceeds the " + std::to_string(distinct_blocks) + " distinct blocks in the trace");
  }
  return Capacity{std::string(spec), blocks};
}

StatusOr<std::vector<Capacity>> ParseCapacities(std::string_view list, uint64_t distinct_blocks) {
  std::vector<Capacity> out;
  while (true) {
    size_t comma = list.find(',');
    auto one = ParseCapacity(list.substr(0, comma), distinct_blocks);
    if (!one.ok()) return one.status();
    out.push_back(std::move(*one));
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return out;
}

}  // namespace crescent::sim
