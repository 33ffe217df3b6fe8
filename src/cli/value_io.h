// The bytes of the client verbs: a value read from a file or stdin for put,
// written to a file or stdout for get, and the text that ls, exists and stat
// print (escaped by EscapeText, cli_util.h). Errors are Status values
// (IO_ERROR naming the file and errno's text); nothing here prints.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "crescent/status.h"

namespace crescent::cli {

// Reads FILE whole ("" or "-": stdin). Any failure is an error, never a
// shorter value: a put of a truncated value would be silent data loss. A value
// over `max_bytes` is INVALID_SIZE, found without holding more than
// `max_bytes`: a regular file by its size, before a byte is read; anything else
// (a pipe, a device such as /dev/zero) as soon as more than that has come.
StatusOr<std::string> ReadValue(const std::string& file, uint64_t max_bytes);

// Writes all of `data` to FILE ("" or "-": stdout). A regular file is written
// whole under a temporary name and renamed over FILE, so a failure half way
// leaves FILE as it was (see value_io.cc for which files are written in place).
Status WriteValue(const std::string& file, std::string_view data);

// Writes all of `text` to stdout with write(2): a failure (a full disk, a
// closed pipe) is an IO_ERROR "cannot write to stdout: REASON", never lost in
// a stream's buffer.
Status WriteStdout(std::string_view text);

}  // namespace crescent::cli
