// Tenant key namespaces (docs/security.md, "Tenants"). The master stores the
// key of a client in tenant T as the internal key
//
//   "\x1d" T "\x1d" KEY
//
// (0x1d, the ASCII group separator, is the reserved mark). A caller without a
// tenant stores its keys as they are: the default namespace. No caller's key
// may begin with the mark (the RPC handlers refuse it INVALID_KEY), so no one
// reaches another tenant's namespace, and a default key never looks like a
// tenant's. A tenant's keys are then one contiguous range of the key order,
// under the prefix "\x1d" T "\x1d": prefix queries, lists and removes by
// prefix, the Bloom filter and the key indexes stay per tenant with no other
// change. Tenant names (auth/token.h CheckName) hold no mark.
#pragma once

#include <string>
#include <string_view>

namespace crescent::master {

inline constexpr char kTenantMark = '\x1d';

// Whether `key` names a tenant's namespace (begins with the mark).
inline bool IsTenantKey(std::string_view key) { return !key.empty() && key[0] == kTenantMark; }

// "\x1d" T "\x1d": where tenant `tenant`'s keys begin; empty for the default
// namespace (`tenant` empty).
inline std::string TenantPrefix(std::string_view tenant) {
  if (tenant.empty()) return {};
  std::string out;
  out.reserve(tenant.size() + 2);
  out += kTenantMark;
  out += tenant;
  out += kTenantMark;
  return out;
}

// `key` as tenant `tenant` names it (unchanged in the default namespace).
inline std::string TenantKey(std::string_view tenant, std::string_view key) {
  std::string out = TenantPrefix(tenant);
  out += key;
  return out;
}

// The tenant of internal key `key`: empty for a default key, or for a key
// with the mark but no second one (malformed: TenantKeyValid refuses it).
inline std::string_view TenantOfKey(std::string_view key) {
  if (!IsTenantKey(key)) return {};
  const size_t end = key.find(kTenantMark, 1);
  if (end == std::string_view::npos) return {};
  return key.substr(1, end - 1);
}

// The key as its client named it: `key` less its tenant prefix.
inline std::string_view ClientKeyOf(std::string_view key) {
  const std::string_view tenant = TenantOfKey(key);
  return tenant.empty() ? key : key.substr(tenant.size() + 2);
}

// A key that begins with the mark must name a tenant: a non-empty name
// between two marks, followed by a client's key that does not begin with it.
inline bool TenantKeyValid(std::string_view key) {
  return !IsTenantKey(key) || (!TenantOfKey(key).empty() && !IsTenantKey(ClientKeyOf(key)));
}

// `prefix` + key in one buffer reused from key to key: a batch's internal
// keys built with no allocation per key (a tenant's, prefix TenantPrefix(T);
// an empty prefix gives each key as it is).
class PrefixedKeys {
 public:
  explicit PrefixedKeys(std::string_view prefix) : buf_(prefix), prefix_size_(prefix.size()) {}
  std::string_view operator()(std::string_view key) {
    if (prefix_size_ == 0) return key;
    buf_.resize(prefix_size_);
    buf_ += key;
    return buf_;
  }

 private:
  std::string buf_;
  size_t prefix_size_;
};

}  // namespace crescent::master
