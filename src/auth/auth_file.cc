#include "auth/auth_file.h"

#include <vector>

#include "auth/token.h"

namespace crescent::auth {
namespace {

std::vector<std::string_view> SplitSpaces(std::string_view line) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    const size_t sp = line.find(' ', start);
    out.push_back(line.substr(start, sp == std::string_view::npos ? sp : sp - start));
    if (sp == std::string_view::npos) return out;
    start = sp + 1;
  }
}

// Decimal digits without sign or leading zero, fitting 64 bits.
bool ParseDecimal(std::string_view text, uint64_t* out) {
  if (text.empty() || text.size() > 20 || (text.size() > 1 && text[0] == '0')) return false;
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - digit) / 10) return false;
    v = v * 10 + digit;
  }
  *out = v;
  return true;
}

Status CheckUser(const AuthFile& file, const std::string& name, const UserEntry& entry) {
  if (Status s = CheckName("token name", name); !s.ok()) return s;
  if (file.users.contains(name)) {
    return Status(ErrorCode::kInvalidArgument, "a token named '" + name + "' already exists");
  }
  if (entry.tenant.empty()) return Status::Ok();
  if (entry.role != Role::kClient) {
    return Status(ErrorCode::kInvalidArgument, "only a client token has a tenant (" +
                                                   std::string(RoleName(entry.role)) +
                                                   " tokens act on every tenant or on none)");
  }
  if (!file.tenant_quotas.contains(entry.tenant)) {
    return Status(ErrorCode::kInvalidArgument, "no tenant '" + entry.tenant +
                                                   "' (create it first: crescent tenant set "
                                                   "--auth-file FILE " +
                                                   entry.tenant + " --quota SIZE)");
  }
  return Status::Ok();
}

Status LineError(size_t line, const std::string& what) {
  return Status(ErrorCode::kCorruptData, "line " + std::to_string(line) + ": " + what);
}

// One "tenant" or "user" record into `file`.
Status ParseRecord(const std::vector<std::string_view>& f, size_t line, AuthFile* file,
                   std::vector<std::pair<size_t, std::string>>* user_lines) {
  if (f[0] == "tenant") {
    if (f.size() != 3) return LineError(line, "a tenant line is: tenant NAME QUOTA_BYTES");
    const std::string name(f[1]);
    uint64_t quota = 0;
    if (!ParseDecimal(f[2], &quota)) return LineError(line, "the quota is not a byte count");
    if (file->tenant_quotas.contains(name)) return LineError(line, "tenant '" + name + "' again");
    if (Status s = file->SetTenantQuota(name, quota); !s.ok()) return LineError(line, s.message());
    return Status::Ok();
  }
  if (f[0] == "user") {
    if (f.size() != 7) {
      return LineError(line, "a user line is: user NAME ROLE TENANT SALT STORED_KEY SERVER_KEY");
    }
    UserEntry entry;
    StatusOr<Role> role = ParseRole(f[2]);
    if (!role.ok()) return LineError(line, role.status().message());
    entry.role = *role;
    if (f[3] != "-") entry.tenant = std::string(f[3]);
    if (!FromHex(f[4], &entry.verifier.salt) || !FromHex(f[5], &entry.verifier.stored_key) ||
        !FromHex(f[6], &entry.verifier.server_key)) {
      return LineError(line, "a salt or key is not 64 lowercase hex digits");
    }
    // Tenants may be declared below their users: their check waits for the end.
    const std::string name(f[1]);
    if (Status s = CheckName("token name", name); !s.ok()) return LineError(line, s.message());
    if (!file->users.emplace(name, std::move(entry)).second) {
      return LineError(line, "user '" + name + "' again");
    }
    user_lines->emplace_back(line, name);
    return Status::Ok();
  }
  return LineError(line, "unknown record '" + std::string(f[0]) + "'");
}

}  // namespace

std::string_view RoleName(Role role) {
  switch (role) {
    case Role::kAdmin: return "admin";
    case Role::kClient: return "client";
    case Role::kNode: return "node";
  }
  return "unknown";
}

StatusOr<Role> ParseRole(std::string_view text) {
  for (Role r : {Role::kAdmin, Role::kClient, Role::kNode}) {
    if (text == RoleName(r)) return r;
  }
  return Status(ErrorCode::kInvalidArgument,
                "unknown role '" + std::string(text) + "' (roles: admin, client, node)");
}

const UserEntry* AuthFile::FindUser(std::string_view name) const {
  auto it = users.find(std::string(name));
  return it == users.end() ? nullptr : &it->second;
}

Status AuthFile::AddUser(const std::string& name, UserEntry entry) {
  if (Status s = CheckUser(*this, name, entry); !s.ok()) return s;
  users.emplace(name, std::move(entry));
  return Status::Ok();
}

Status AuthFile::RemoveUser(const std::string& name) {
  if (users.erase(name) == 0) {
    return Status(ErrorCode::kInvalidArgument, "no token named '" + name + "'");
  }
  return Status::Ok();
}

Status AuthFile::SetTenantQuota(const std::string& tenant, uint64_t quota_bytes) {
  if (Status s = CheckName("tenant", tenant); !s.ok()) return s;
  if (quota_bytes == 0) {
    return Status(ErrorCode::kInvalidArgument, "tenant '" + tenant + "': a quota must be above 0");
  }
  tenant_quotas[tenant] = quota_bytes;
  return Status::Ok();
}

StatusOr<AuthFile> ParseAuthFile(std::string_view text) {
  AuthFile file;
  std::vector<std::pair<size_t, std::string>> user_lines;
  bool header = false;
  size_t line_no = 0;
  size_t start = 0;
  while (start < text.size()) {
    const size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) return LineError(line_no + 1, "no newline at its end");
    const std::string_view line = text.substr(start, nl - start);
    start = nl + 1;
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    if (!header) {
      if (line != kAuthFileHeader) {
        return LineError(line_no, "not an auth file (its first record must be '" +
                                      std::string(kAuthFileHeader) + "')");
      }
      header = true;
      continue;
    }
    if (Status s = ParseRecord(SplitSpaces(line), line_no, &file, &user_lines); !s.ok()) return s;
  }
  if (!header) return LineError(line_no, "empty: no '" + std::string(kAuthFileHeader) + "' line");
  for (const auto& [line, name] : user_lines) {
    const UserEntry& e = file.users.at(name);
    if (e.tenant.empty()) continue;
    if (e.role != Role::kClient) return LineError(line, "only a client token has a tenant");
    if (!file.tenant_quotas.contains(e.tenant)) {
      return LineError(
          line, "user '" + name + "' names tenant '" + e.tenant + "', which has no tenant line");
    }
  }
  return file;
}

std::string FormatAuthFile(const AuthFile& file) {
  std::string out =
      "# Crescent auth file (docs/security.md), written by `crescent token` and "
      "`crescent tenant`.\n"
      "# It holds verifiers, from which no token can be recovered. Keep it mode 0600.\n";
  out += kAuthFileHeader;
  out += '\n';
  for (const auto& [name, quota] : file.tenant_quotas) {
    out += "tenant " + name + " " + std::to_string(quota) + "\n";
  }
  for (const auto& [name, e] : file.users) {
    out += "user " + name + " " + std::string(RoleName(e.role)) + " " +
           (e.tenant.empty() ? "-" : e.tenant) + " " + ToHex(View(e.verifier.salt)) + " " +
           ToHex(View(e.verifier.stored_key)) + " " + ToHex(View(e.verifier.server_key)) + "\n";
  }
  return out;
}

}  // namespace crescent::auth
