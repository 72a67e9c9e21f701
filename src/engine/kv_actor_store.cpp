#include "engine/kv_actor_store.hpp"

#include "engine/engine_actor_kv.hpp"
#include "engine/record_codec.hpp"
#include "util/log.hpp"

#include <map>

namespace rivetkit::engine {

namespace {

// The record of earlier releases: 0x01 | generation u32 BE | chunk u16 BE (migrated on load).
constexpr char kRecordPrefix = '\x01';

struct ParsedKey {
  std::uint32_t generation;
  std::uint16_t chunk;
};

std::optional<ParsedKey> parse_key(const std::string& k) {
  if (k.size() != 7 || k[0] != kRecordPrefix) {
    return std::nullopt;
  }
  auto byte = [&](std::size_t i) {
    return static_cast<std::uint32_t>(static_cast<unsigned char>(k[i]));
  };
  return ParsedKey{(byte(1) << 24) | (byte(2) << 16) | (byte(3) << 8) | byte(4),
                   static_cast<std::uint16_t>((byte(5) << 8) | byte(6))};
}

/// The newest complete record of the old format at or below `generation`.
Result<std::optional<storage::PersistedActor>> decode_legacy(
    const std::string& actor_id,
    std::uint32_t generation,
    const std::vector<storage::KvEntry>& entries) {
  // generation -> chunk -> bytes; only generations up to ours count.
  std::map<std::uint32_t, std::map<std::uint16_t, const std::string*>> gens;
  for (const auto& e : entries) {
    auto key = parse_key(e.key);
    if (key && key->generation <= generation) {
      gens[key->generation][key->chunk] = &e.value;
    }
  }
  for (auto it = gens.rbegin(); it != gens.rend(); ++it) {
    auto& chunks = it->second;
    auto first = chunks.find(0);
    if (first == chunks.end() || first->second->size() < 2) {
      continue;
    }
    const std::string& c0 = *first->second;
    auto count = static_cast<std::uint16_t>((static_cast<unsigned char>(c0[0]) << 8)
                                            | static_cast<unsigned char>(c0[1]));
    std::string bytes = c0.substr(2);
    bool complete = true;
    for (std::uint16_t c = 1; c < count; ++c) {
      auto ci = chunks.find(c);
      if (ci == chunks.end()) {
        complete = false;
        break;
      }
      bytes += *ci->second;
    }
    if (!complete) {
      log::warn("actor {}: record of generation {} is incomplete, trying an older one", actor_id,
                it->first);
      continue;
    }
    auto decoded = decode_record(bytes);
    if (!decoded) {
      return fail(decoded.error());
    }
    return std::optional<storage::PersistedActor>(std::move(*decoded));
  }
  return std::optional<storage::PersistedActor>();
}

storage::KvActorStoreOptions options_for(const std::string& actor_id,
                                         std::uint32_t generation,
                                         std::optional<std::string> input,
                                         KvActorStore::ConnsDurable on_conns_durable) {
  storage::KvActorStoreOptions options;
  options.generation = generation;
  options.input = std::move(input);
  options.fenced = true;
  options.on_conns_durable = std::move(on_conns_durable);
  storage::LegacyRecords legacy;
  legacy.start = std::string(1, kRecordPrefix);
  legacy.end = std::string(1, static_cast<char>(kRecordPrefix + 1));
  legacy.decode = [actor_id, generation](const std::vector<storage::KvEntry>& entries) {
    return decode_legacy(actor_id, generation, entries);
  };
  options.legacy = std::move(legacy);
  return options;
}

}  // namespace

KvActorStore::KvActorStore(std::shared_ptr<EngineKv> link,
                           std::string actor_id,
                           std::uint32_t generation,
                           std::optional<std::string> input,
                           ConnsDurable on_conns_durable)
    : storage::KvActorStore(
        actor_id,
        std::make_unique<EngineActorKv>(link, actor_id, generation),
        options_for(actor_id, generation, std::move(input), std::move(on_conns_durable))) {}

Task<Result<void>> KvActorStore::drop(std::shared_ptr<EngineKv> link, std::string actor_id) {
  auto op = link->kv(std::move(actor_id), envoy::KvDropRequest{});
  auto r = co_await std::move(op);
  if (!r) {
    co_return fail(r.error());
  }
  co_return Result<void>{};
}

}  // namespace rivetkit::engine
