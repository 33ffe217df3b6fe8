// Where a client's token comes from: a token file (`--token-file PATH`), else
// $CRESCENT_TOKEN, else none. A token file holds one token, "NAME:SECRET" as
// `crescent token add` printed it (a trailing newline is fine), and is refused,
// as the auth file is, when others than its owner may read or change it.
#pragma once

#include <string>

#include "crescent/status.h"

namespace crescent::auth {

inline constexpr const char* kTokenEnv = "CRESCENT_TOKEN";

// The token, as "NAME:SECRET", from the file at `path` when it is not empty,
// else from $CRESCENT_TOKEN; "" when neither is given. An unreadable or exposed
// file is kIoError or kInvalidArgument, text that is not a token
// UNAUTHENTICATED (the message never echoes it); both name where it came from.
StatusOr<std::string> LoadClientToken(const std::string& path);

}  // namespace crescent::auth
