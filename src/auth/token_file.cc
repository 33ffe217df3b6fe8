#include "auth/token_file.h"

#include <cstdlib>

#include "auth/auth_file_io.h"
#include "auth/token.h"

namespace crescent::auth {

StatusOr<std::string> LoadClientToken(const std::string& path) {
  std::string text;
  std::string where;
  if (!path.empty()) {
    StatusOr<std::string> read = ReadOwnerOnlyFile(path, "token file");
    if (!read.ok()) return read.status();
    text = std::move(*read);
    where = "token file '" + path + "'";
  } else if (const char* env = std::getenv(kTokenEnv); env != nullptr && *env != '\0') {
    text = env;
    where = std::string("$") + kTokenEnv;
  } else {
    return std::string();
  }
  StatusOr<Token> token = ParseToken(text);
  if (!token.ok()) return Status(token.status().code(), where + ": " + token.status().message());
  return FormatToken(*token);
}

}  // namespace crescent::auth
