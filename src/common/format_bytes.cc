#include "common/format_bytes.h"

namespace crescent {

std::string FormatBytes(uint64_t bytes, BytesStyle style) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 4;
  // A half of unit u is 2^(10u - 1) bytes.
  while (unit > 0 && (bytes >> (10 * unit) == 0 || bytes % (uint64_t{1} << (10 * unit - 1)) != 0)) {
    --unit;
  }
  const char* space = style == BytesStyle::kText ? " " : "";
  if (unit == 0) return std::to_string(bytes) + space + kUnits[0];
  const uint64_t halves = bytes >> (10 * unit - 1);
  std::string out = std::to_string(halves / 2);
  if (halves % 2 != 0) {
    out += ".5";
  } else if (style == BytesStyle::kText) {
    out += ".0";
  }
  return out + space + kUnits[unit];
}

}  // namespace crescent
