// Byte counts as people read them, the one formatter of every command, report
// and bench label: the largest binary unit (KiB, MiB, GiB, TiB; all powers of
// 1024) in which the count is whole or a half, with one decimal ("64.0 MiB",
// "1.5 MiB", "1280.0 KiB"); below 1 KiB, or when no unit holds it so, the count
// itself ("4095 B"). A size therefore never prints as one it is not.
#pragma once

#include <cstdint>
#include <string>

namespace crescent {

enum class BytesStyle {
  kText,   // "64.0 MiB", "1.5 MiB", "4095 B"
  kLabel,  // "64MiB", "1.5MiB", "4095B": bench labels, no space and no ".0"
};

std::string FormatBytes(uint64_t bytes, BytesStyle style = BytesStyle::kText);

}  // namespace crescent
