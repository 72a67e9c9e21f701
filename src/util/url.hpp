#pragma once
// URL helpers for request targets: split path and query, percent-decoding (with or without
// form-style '+'), query parameter parsing that keeps the raw text of each pair (the gateway
// forwards non-rvt pairs byte-for-byte), and percent-encoding.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rivetkit::util {

struct Target {
  std::string_view path;   // before '?'
  std::string_view query;  // after '?', without it; empty when absent
  bool has_query = false;
};
Target split_target(std::string_view target);

/// Percent-decodes; with `plus_is_space`, '+' becomes ' ' (form encoding). Returns nullopt on a
/// malformed escape.
std::optional<std::string> percent_decode(std::string_view text, bool plus_is_space = false);
/// Encodes everything except unreserved characters (A-Z a-z 0-9 - _ . ~).
std::string percent_encode(std::string_view text);

struct QueryPair {
  std::string_view raw;  // "name=value" exactly as sent
  std::string_view raw_name;
  std::string_view raw_value;
};
/// Splits a query on '&' (empty pairs skipped).
std::vector<QueryPair> split_query(std::string_view query);

}  // namespace rivetkit::util
