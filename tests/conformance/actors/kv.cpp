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

// Not in the suite: rivetkit-cpp's own KV checks (tests/js/integration/kv.test.mjs) use the
// whole API, binary keys, values too large for an action's arguments, and state written in the
// same turn as KV.
struct KvProbeState {
  std::int64_t count = 0;
};
RIVETKIT_FIELDS(KvProbeState, count)

std::vector<std::vector<rivetkit::Bytes>> to_byte_pairs(const std::vector<rivetkit::KvPair>& in) {
  std::vector<std::vector<rivetkit::Bytes>> out;
  for (const auto& [key, value] : in) {
    out.push_back(
        {rivetkit::Bytes(key.begin(), key.end()), rivetkit::Bytes(value.begin(), value.end())});
  }
  return out;
}

rivetkit::KvListOptions list_options(const std::optional<RangeOptions>& options) {
  rivetkit::KvListOptions list;
  if (options) {
    list.reverse = options->reverse.value_or(false);
    list.limit = options->limit;
  }
  return list;
}

struct KeySize {
  std::string key;
  std::int64_t size = 0;
};
RIVETKIT_FIELDS(KeySize, key, size)

rivetkit::ActorDefinition kv_probe() {
  using Task = rivetkit::Task<void>;
  return rivetkit::actor<KvProbeState>("kvProbe")
      .action("put",
              [](auto& c, std::string key, std::string value) -> Task {
                co_await c.kv().put(std::move(key), std::move(value));
              })
      .action("get",
              [](auto& c, std::string key) -> rivetkit::Task<std::optional<std::string>> {
                co_return co_await c.kv().get(std::move(key));
              })
      .action("remove",
              [](auto& c, std::string key) -> Task { co_await c.kv().remove(std::move(key)); })
      .action("batchPut",
              [](auto& c, std::vector<std::vector<std::string>> pairs) -> Task {
                std::vector<rivetkit::KvPair> entries;
                for (auto& p : pairs) {
                  if (p.size() != 2) {
                    throw rivetkit::UserError("each entry is [key, value]");
                  }
                  entries.emplace_back(std::move(p[0]), std::move(p[1]));
                }
                co_await c.kv().batch_put(std::move(entries));
              })
      .action("batchGet",
              [](auto& c, std::vector<std::string> keys)
                  -> rivetkit::Task<std::vector<std::optional<std::string>>> {
                co_return co_await c.kv().batch_get(std::move(keys));
              })
      .action("batchRemove",
              [](auto& c, std::vector<std::string> keys) -> Task {
                co_await c.kv().batch_remove(std::move(keys));
              })
      .action(
          "list",
          [](auto& c, std::string prefix,
             std::optional<RangeOptions> options) -> rivetkit::Task<std::vector<TextEntry>> {
            co_return to_entries(co_await c.kv().list(std::move(prefix), list_options(options)));
          })
      .action("listRange",
              [](auto& c, std::string start, std::string end,
                 std::optional<RangeOptions> options) -> rivetkit::Task<std::vector<TextEntry>> {
                co_return to_entries(co_await c.kv().list_range(std::move(start), std::move(end),
                                                                list_options(options)));
              })
      .action("removeRange",
              [](auto& c, std::string start, std::string end) -> Task {
                co_await c.kv().remove_range(std::move(start), std::move(end));
              })
      // Binary keys and values (Uint8Array on the client).
      .action("putBytes",
              [](auto& c, rivetkit::Bytes key, rivetkit::Bytes value) -> Task {
                co_await c.kv().put(std::string(key.begin(), key.end()),
                                    std::string(value.begin(), value.end()));
              })
      .action("getBytes",
              [](auto& c, rivetkit::Bytes key) -> rivetkit::Task<std::optional<rivetkit::Bytes>> {
                auto v = co_await c.kv().get(std::string(key.begin(), key.end()));
                if (!v) {
                  co_return std::nullopt;
                }
                co_return rivetkit::Bytes(v->begin(), v->end());
              })
      .action("listBytes",
              [](auto& c, rivetkit::Bytes prefix, std::optional<RangeOptions> options)
                  -> rivetkit::Task<std::vector<std::vector<rivetkit::Bytes>>> {
                co_return to_byte_pairs(co_await c.kv().list(
                    std::string(prefix.begin(), prefix.end()), list_options(options)));
              })
      // A value of `size` bytes made here (larger than an action's arguments may be).
      .action("putRepeated",
              [](auto& c, std::string key, std::int64_t size) -> Task {
                if (size < 0 || size > (1 << 24)) {
                  throw rivetkit::UserError("size out of range");
                }
                co_await c.kv().put(std::move(key),
                                    std::string(static_cast<std::size_t>(size), 'x'));
              })
      // `count` entries of `size` bytes each under "<prefix><i>", in one batch.
      .action("batchPutRepeated",
              [](auto& c, std::string prefix, std::int64_t count, std::int64_t size) -> Task {
                if (count < 0 || count > 100000 || size < 0 || size > (1 << 24)) {
                  throw rivetkit::UserError("count or size out of range");
                }
                std::vector<rivetkit::KvPair> entries;
                for (std::int64_t i = 0; i < count; ++i) {
                  entries.emplace_back(prefix + std::to_string(i),
                                       std::string(static_cast<std::size_t>(size), 'y'));
                }
                co_await c.kv().batch_put(std::move(entries));
              })
      // Keys and value sizes only (a listing of large values is too long for one reply).
      .action("listSizes",
              [](auto& c, std::string prefix,
                 std::optional<RangeOptions> options) -> rivetkit::Task<std::vector<KeySize>> {
                std::vector<KeySize> out;
                for (auto& [key, value] :
                     co_await c.kv().list(std::move(prefix), list_options(options))) {
                  out.push_back(KeySize{key, static_cast<std::int64_t>(value.size())});
                }
                co_return out;
              })
      .action("sizeOf",
              [](auto& c, std::string key) -> rivetkit::Task<std::int64_t> {
                auto v = co_await c.kv().get(std::move(key));
                co_return v ? static_cast<std::int64_t>(v->size()) : -1;
              })
      // State and KV changed in one turn: both are in one commit, the reply waits for it.
      .action("increment",
              [](auto& c, std::int64_t by) -> rivetkit::Task<std::int64_t> {
                const std::int64_t count = c.state().count += by;
                co_await c.kv().put("count", std::to_string(count));
                co_return count;
              })
      .action("getCount", [](auto& c) { return std::as_const(c).state().count; })
      .action("triggerSleep", [](auto& c) { c.sleep(); })
      .action("destroySelf", [](auto& c) { c.destroy(); });
}

}  // namespace

void add_kv_actors(rivetkit::Registry& registry) {
  registry.add(kv_actor());
  registry.add(kv_probe());
}

}  // namespace fixture
