#pragma once
// Actor key serialization (client-protocol.md §4.4): the REST `key` string and the engine's
// internal key. [] -> "/"; "" -> "\0"; '\' -> "\\", '/' -> "\/"; parts joined with '/'.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rivetkit::core {

std::string serialize_key(const std::vector<std::string>& key);
/// Inverse of serialize_key. Returns nullopt for a malformed string (dangling backslash).
std::optional<std::vector<std::string>> parse_key(std::string_view serialized);

}  // namespace rivetkit::core
