#include "engine/kv_actor_store.hpp"

#include "engine/kv_commit_journal.hpp"
#include "engine/record_codec.hpp"
#include "util/log.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <string_view>

namespace rivetkit::engine {

namespace {

constexpr char kRecordPrefix = '\x01';
constexpr std::size_t kChunkBytes = 120 * 1024;  // engine limit: 128 KiB per value
using journal::kMaxPutBytes;                     // engine limit (envoy-protocol.md §4.8)

std::string be32(std::uint32_t v) {
  std::string s(4, '\0');
  for (int i = 0; i < 4; ++i) {
    s[static_cast<std::size_t>(i)] = static_cast<char>((v >> (8 * (3 - i))) & 0xff);
  }
  return s;
}

std::string chunk_key(std::uint32_t generation, std::uint16_t chunk) {
  std::string k(1, kRecordPrefix);
  k += be32(generation);
  k += static_cast<char>((chunk >> 8) & 0xff);
  k += static_cast<char>(chunk & 0xff);
  return k;
}

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

Error storage_error(std::string code, std::string message) {
  return Error{"engine", std::move(code), std::move(message), std::nullopt, false};
}

}  // namespace

KvActorStore::KvActorStore(std::shared_ptr<EngineKv> link,
                           std::string actor_id,
                           std::uint32_t generation,
                           std::optional<std::string> input,
                           ConnsDurable on_conns_durable)
    : link_(std::move(link)),
      actor_id_(std::move(actor_id)),
      generation_(generation),
      input_(std::move(input)),
      on_conns_durable_(std::move(on_conns_durable)),
      kv_(link_, actor_id_, generation) {}

Task<Result<storage::PersistedActor>> KvActorStore::load() {
  // A commit a crash cut short past its commit point is finished first: what follows reads it.
  auto recover_op = kv_.recover();
  if (auto recovered = co_await std::move(recover_op); !recovered) {
    co_return fail(recovered.error());
  }
  envoy::KvListRequest list;
  list.query = envoy::KvListPrefixQuery{std::string(1, kRecordPrefix)};
  auto list_op = link_->kv(actor_id_, std::move(list));
  auto listed = co_await std::move(list_op);
  if (!listed) {
    co_return fail(listed.error());
  }
  const auto* resp = std::get_if<envoy::KvListResponse>(&*listed);
  if (resp == nullptr || resp->keys.size() != resp->values.size()) {
    co_return fail(storage_error("kv_unexpected", "Unexpected answer to a KV list"));
  }
  // generation -> chunk -> bytes; only generations up to ours count (a newer one would mean
  // this instance is already stale).
  std::map<std::uint32_t, std::map<std::uint16_t, const std::string*>> gens;
  for (std::size_t i = 0; i < resp->keys.size(); ++i) {
    auto key = parse_key(resp->keys[i]);
    if (key && key->generation <= generation_) {
      gens[key->generation][key->chunk] = &resp->values[i];
    }
  }
  storage::PersistedActor actor;
  std::optional<std::uint32_t> found;
  for (auto it = gens.rbegin(); it != gens.rend() && !found; ++it) {
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
      log::warn("actor {}: record of generation {} is incomplete, trying an older one", actor_id_,
                it->first);
      continue;
    }
    auto decoded = decode_record(bytes);
    if (!decoded) {
      co_return fail(decoded.error());
    }
    actor = std::move(*decoded);
    found = it->first;
  }
  older_generations_ = !gens.empty();
  current_ = actor;
  if (found && *found < generation_) {
    // Take ownership: from here on only this generation's keys count (see the file comment).
    auto put_op = put_record();
    auto put = co_await std::move(put_op);
    if (!put) {
      co_return fail(put.error());
    }
  }
  actor.input = input_;
  co_return actor;
}

Task<Result<void>> KvActorStore::commit(storage::ActorWrite write) {
  std::vector<storage::PersistedConn> tunneled;
  if (on_conns_durable_) {
    for (const auto& c : write.conn_upserts) {
      if (!c.gateway_id.empty()) {
        tunneled.push_back(c);
      }
    }
  }
  storage::KvBatch kv = std::move(write.kv);
  write.kv = storage::KvBatch{};
  const bool record_changed = !write.empty();
  apply_write(current_, write);
  if (record_changed) {
    // The record goes in the same atomic write as the KV batch.
    auto built = record_put();
    if (!built) {
      co_return fail(built.error());
    }
    for (std::size_t i = 0; i < built->keys.size(); ++i) {
      kv.put(std::move(built->keys[i]), std::move(built->values[i]));
    }
  }
  auto op = kv_.write(std::move(kv));
  auto done = co_await std::move(op);
  if (done && record_changed) {
    auto drop_op = drop_older_generations();
    co_await std::move(drop_op);
  }
  if (done && !tunneled.empty()) {
    on_conns_durable_(std::move(tunneled));
  }
  co_return done;
}

Result<envoy::KvPutRequest> KvActorStore::record_put() const {
  std::string bytes = encode_record(current_);
  std::size_t count = (bytes.size() + 2 + kChunkBytes - 1) / kChunkBytes;
  if (count == 0) {
    count = 1;
  }
  if (bytes.size() + count * 9 > kMaxPutBytes) {
    return fail(Error{"actor", "state_too_large",
                      "The actor's state, connections and schedules ("
                          + std::to_string(bytes.size())
                          + " bytes) exceed what engine mode can store atomically (about 950 KiB)",
                      std::nullopt, true});
  }
  envoy::KvPutRequest put;
  std::string first(2, '\0');
  first[0] = static_cast<char>((count >> 8) & 0xff);
  first[1] = static_cast<char>(count & 0xff);
  std::size_t pos = 0;
  for (std::size_t c = 0; c < count; ++c) {
    std::string value = c == 0 ? first : std::string();
    std::size_t room = kChunkBytes - value.size();
    value += bytes.substr(pos, room);
    pos += std::min(room, bytes.size() - pos);
    put.keys.push_back(chunk_key(generation_, static_cast<std::uint16_t>(c)));
    put.values.push_back(std::move(value));
  }
  return put;
}

Task<Result<void>> KvActorStore::put_record() {
  auto put = record_put();
  if (!put) {
    co_return fail(put.error());
  }
  auto put_op = kv_.send(std::move(*put));
  if (auto done = co_await std::move(put_op); !done) {
    co_return done;
  }
  auto drop_op = drop_older_generations();
  co_await std::move(drop_op);
  co_return Result<void>{};
}

Task<void> KvActorStore::drop_older_generations() {
  if (!older_generations_) {
    co_return;
  }
  older_generations_ = false;
  envoy::KvDeleteRangeRequest range{chunk_key(0, 0), chunk_key(generation_, 0)};
  auto del_op = link_->kv(actor_id_, std::move(range));
  auto deleted = co_await std::move(del_op);
  if (!deleted) {
    log::warn("actor {}: could not delete older records: {}", actor_id_, deleted.error().message);
  }
}

Task<Result<void>> KvActorStore::drop(std::shared_ptr<EngineKv> link, std::string actor_id) {
  auto op = link->kv(std::move(actor_id), envoy::KvDropRequest{});
  auto r = co_await std::move(op);
  if (!r) {
    co_return fail(r.error());
  }
  co_return Result<void>{};
}

}  // namespace rivetkit::engine
