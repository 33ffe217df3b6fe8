// Tokens: what `crescent token add` prints once and a client presents.
//
// A token is "NAME:SECRET", SECRET being 64 lowercase hex digits (256 random
// bits from OpenSSL's RAND_bytes). The name is public (it picks the verifier
// in the auth file); the secret is what only the holder knows. Only the
// verifier derived from it (scram.h) is ever stored, so a token lost is a
// token to revoke and add again: nothing can print it a second time.
//
// Names (of tokens and of tenants): 1 to kMaxNameBytes bytes of letters,
// digits, '.', '_' and '-', starting with a letter or digit; so a name never
// holds ':' (the token's separator), a space (the auth file's) or '#'.
#pragma once

#include <string>
#include <string_view>

#include "auth/scram.h"
#include "crescent/status.h"

namespace crescent::auth {

inline constexpr size_t kMaxNameBytes = 64;

struct Token {
  std::string name;
  Key secret{};
};

// OK, or kInvalidArgument saying what is wrong with `name`; `what` names it in
// the message ("token name", "tenant").
Status CheckName(std::string_view what, std::string_view name);

// A fresh token for `name` (which must pass CheckName).
Token NewToken(std::string name);

// "NAME:SECRET".
std::string FormatToken(const Token& token);

// The token in `text`, surrounding whitespace (a file's newline) ignored.
// kUnauthenticated when it is not one: the message never echoes the text, which
// may be a mistyped secret.
StatusOr<Token> ParseToken(std::string_view text);

// Lowercase hex of `bytes`, and its inverse (false on anything but 2 hex
// digits a byte); shared with the auth file's format.
std::string ToHex(std::string_view bytes);
bool FromHex(std::string_view hex, Key* out);

}  // namespace crescent::auth
