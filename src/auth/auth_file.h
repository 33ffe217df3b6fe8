// The auth file: who may connect, with which role, in which tenant, and each
// tenant's byte quota. `crescent token` and `crescent tenant` write it; the
// servers read it. It holds verifiers (scram.h), never tokens.
//
// Its text, one record a line, fields separated by one space:
//   crescent-auth-file 1                       the first line that is not a comment
//   tenant NAME QUOTA_BYTES                    QUOTA_BYTES: decimal, above 0
//   user NAME ROLE TENANT SALT STORED_KEY SERVER_KEY
// ROLE is admin, client or node; TENANT a tenant's name or "-" for none (only a
// client has one, and its tenant has a line of its own); SALT, STORED_KEY and
// SERVER_KEY are 64 lowercase hex digits each. Lines starting with '#' and empty
// lines are comments. Names are unique per kind and pass CheckName (token.h).
// Anything else makes the file corrupt: ParseAuthFile refuses it whole, naming
// the line, rather than dropping the records it cannot read.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "auth/scram.h"
#include "crescent/status.h"

namespace crescent::auth {

enum class Role : uint8_t { kAdmin = 1, kClient = 2, kNode = 3 };

std::string_view RoleName(Role role);
// kInvalidArgument naming the roles for anything but admin, client or node.
StatusOr<Role> ParseRole(std::string_view text);

struct UserEntry {
  Role role = Role::kClient;
  std::string tenant;  // empty: none
  Verifier verifier;
};

struct AuthFile {
  std::map<std::string, UserEntry> users;         // by token name
  std::map<std::string, uint64_t> tenant_quotas;  // tenant -> quota in bytes

  const UserEntry* FindUser(std::string_view name) const;

  // The edits the CLI makes, each checked as the file's rules say: a new
  // user's name must be free and valid, its tenant declared and only with the
  // client role; a tenant's name valid and its quota above 0.
  Status AddUser(const std::string& name, UserEntry entry);
  // kInvalidArgument when there is no such user.
  Status RemoveUser(const std::string& name);
  Status SetTenantQuota(const std::string& tenant, uint64_t quota_bytes);
};

inline constexpr std::string_view kAuthFileHeader = "crescent-auth-file 1";

// `text` read as an auth file; kCorruptData "LINE N: what is wrong" when it is
// not one (the caller adds the file's name).
StatusOr<AuthFile> ParseAuthFile(std::string_view text);
// The file's text; ParseAuthFile(FormatAuthFile(f)) gives f back.
std::string FormatAuthFile(const AuthFile& file);

}  // namespace crescent::auth
