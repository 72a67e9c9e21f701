// kv.ts: kvActor, the actor KV (`c.kv()`) with text keys and values, ranges and raw bytes.

#include "fixture.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fixture {
namespace {

struct TextEntry {
  std::string key;
  std::string value;
};
RIVETKIT_FIELDS(TextEntry, key, value)

struct RangeOptions {
  std::optional<bool> reverse;
  std::optional<std::int64_t> limit;
};
RIVETKIT_FIELDS(RangeOptions, reverse, limit)

std::vector<TextEntry> to_entries(std::vector<rivetkit::KvPair> pairs) {
  std::vector<TextEntry> out;
  out.reserve(pairs.size());
  for (auto& [key, value] : pairs) {
    out.push_back(TextEntry{std::move(key), std::move(value)});
  }
  return out;
}

rivetkit::ActorDefinition kv_actor() {
  return rivetkit::actor("kvActor")
      .action("putText",
              [](auto& c, std::string key, std::string value) -> rivetkit::Task<bool> {
                co_await c.kv().put(std::move(key), std::move(value));
                co_return true;
              })
      .action("getText",
              [](auto& c, std::string key) -> rivetkit::Task<std::optional<std::string>> {
                co_return co_await c.kv().get(std::move(key));
              })
      .action("listText",
              [](auto& c, std::string prefix) -> rivetkit::Task<std::vector<TextEntry>> {
                co_return to_entries(co_await c.kv().list(std::move(prefix)));
              })
      .action("listTextRange",
              [](auto& c, std::string start, std::string end,
                 std::optional<RangeOptions> options) -> rivetkit::Task<std::vector<TextEntry>> {
                rivetkit::KvListOptions list;
                if (options) {
                  list.reverse = options->reverse.value_or(false);
                  list.limit = options->limit;
                }
                co_return to_entries(
                    co_await c.kv().list_range(std::move(start), std::move(end), list));
              })
      .action("deleteTextRange",
              [](auto& c, std::string start, std::string end) -> rivetkit::Task<bool> {
                co_await c.kv().remove_range(std::move(start), std::move(end));
                co_return true;
              })
      .action("roundtripArrayBuffer",
              [](auto& c, std::string key,
                 std::vector<int> values) -> rivetkit::Task<std::optional<std::vector<int>>> {
                std::string bytes;
                for (int v : values) {
                  bytes.push_back(static_cast<char>(v & 0xff));
                }
                co_await c.kv().put(key, std::move(bytes));
                auto stored = co_await c.kv().get(key);
                if (!stored) {
                  co_return std::nullopt;
                }
                std::vector<int> out;
                for (char b : *stored) {
                  out.push_back(static_cast<unsigned char>(b));
                }
                co_return out;
              });
}

}  // namespace

void add_kv_actors(rivetkit::Registry& registry) {
  registry.add(kv_actor());
}

}  // namespace fixture
