#include "engine/kv_actor_store.hpp"

#include "engine/kv_commit_journal.hpp"
#include "engine/record_codec.hpp"
#include "engine/runtime_keys.hpp"
#include "util/log.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <string_view>
#include <variant>
#include <vector>

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
      epoch_(generation),
      head_(runtime_keys::owned_by(generation)),
      kv_(link_, actor_id_, generation) {}

Task<Result<storage::PersistedActor>> KvActorStore::load() {
  // A commit a crash cut short past its commit point is finished first: what follows reads it.
  auto recover_op = kv_.recover();
  if (auto recovered = co_await std::move(recover_op); !recovered) {
    co_return fail(recovered.error());
  }
  // One listing for the records of every epoch and a record of the old format (0x01 sorts
  // before them; the journal keys between are gone after recover()).
  storage::KvQuery query;
  query.start = std::string(1, kRecordPrefix);
  query.end = runtime_keys::all_records().second;
  auto list_op = kv_.list(std::move(query));
  auto listed = co_await std::move(list_op);
  if (!listed) {
    co_return fail(listed.error());
  }
  std::map<std::uint32_t, std::vector<storage::KvEntry>> epochs;
  std::vector<storage::KvEntry> legacy;
  for (auto& entry : *listed) {
    if (entry.key[0] == kRecordPrefix) {
      legacy.push_back(std::move(entry));
    } else if (auto key = runtime_keys::parse_record_key(entry.key)) {
      epochs[key->epoch].push_back(std::move(entry));
    }
  }
  if (!epochs.empty() && epochs.rbegin()->first > generation_) {
    co_return fail(stale(epochs.rbegin()->first));
  }
  // The newest epoch with a head (an epoch without one is a copy a crash cut short).
  for (auto it = epochs.rbegin(); it != epochs.rend(); ++it) {
    const std::string head_key = runtime_keys::head_key(it->first);
    auto head_it = std::find_if(it->second.begin(), it->second.end(),
                                [&](const storage::KvEntry& e) { return e.key == head_key; });
    if (head_it == it->second.end()) {
      continue;
    }
    auto head = runtime_keys::decode_head(head_it->value);
    if (!head) {
      co_return fail(head.error());
    }
    if (head->owner > generation_) {
      co_return fail(stale(head->owner));
    }
    auto read_op = read_epoch(it->first, *head, it->second);
    auto actor = co_await std::move(read_op);
    if (!actor) {
      co_return fail(actor.error());
    }
    const bool newest = it == epochs.rbegin();
    if ((head->sealed || head->owner == generation_) && newest) {
      // Handed over cleanly: the epoch is ours as it is.
      epoch_ = it->first;
      head_ = *head;
      head_.owner = generation_;
      head_.sealed = false;
      auto put_op = kv_.send(envoy::KvPutRequest{{runtime_keys::head_key(epoch_)},
                                                 {runtime_keys::encode_head(head_)}});
      if (auto put = co_await std::move(put_op); !put) {
        co_return fail(put.error());
      }
      head_written_ = true;
      if (!tombstones_.empty()) {
        auto sweep_op = sweep_tombstones();
        co_await std::move(sweep_op);
      }
      if (epochs.size() > 1 || !legacy.empty()) {
        auto clean_op = take_over_cleanup(!legacy.empty());
        co_await std::move(clean_op);
      }
    } else {
      auto copy_op = take_over(*actor, !legacy.empty());
      if (auto copied = co_await std::move(copy_op); !copied) {
        co_return fail(copied.error());
      }
    }
    if (input_) {
      actor->input = input_;
    }
    co_return std::move(*actor);
  }
  if (!legacy.empty()) {
    auto decoded = decode_legacy(legacy);
    if (!decoded) {
      co_return fail(decoded.error());
    }
    if (*decoded) {
      log::info("actor {}: moving its record of the old format into keys", actor_id_);
      auto copy_op = take_over(**decoded, true);
      if (auto copied = co_await std::move(copy_op); !copied) {
        co_return fail(copied.error());
      }
      storage::PersistedActor actor = std::move(**decoded);
      actor.input = input_;
      co_return actor;
    }
  }
  // A new actor: nothing to read; its first commit writes the head.
  epoch_ = generation_;
  head_ = runtime_keys::owned_by(generation_);
  storage::PersistedActor actor;
  actor.input = input_;
  co_return actor;
}

Result<std::optional<storage::PersistedActor>> KvActorStore::decode_legacy(
    const std::vector<storage::KvEntry>& entries) const {
  // generation -> chunk -> bytes; only generations up to ours count.
  std::map<std::uint32_t, std::map<std::uint16_t, const std::string*>> gens;
  for (const auto& e : entries) {
    auto key = parse_key(e.key);
    if (key && key->generation <= generation_) {
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
      log::warn("actor {}: record of generation {} is incomplete, trying an older one", actor_id_,
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

Error KvActorStore::stale(std::uint32_t newer) const {
  return Error{"engine", "stale_generation",
               "Actor " + actor_id_ + " generation " + std::to_string(generation_)
                   + " found data of generation " + std::to_string(newer)
                   + ": a newer instance owns it, this one does not start",
               std::nullopt, false};
}

Task<Result<storage::PersistedActor>> KvActorStore::read_epoch(
    std::uint32_t epoch,
    const runtime_keys::Head& head,
    const std::vector<storage::KvEntry>& records) {
  storage::PersistedActor actor;
  actor.has_initialized = head.has_initialized;
  for (const auto& e : records) {
    auto key = runtime_keys::parse_record_key(e.key);
    if (!key) {
      continue;
    }
    if (e.value.empty()
        && (key->kind == runtime_keys::kConn || key->kind == runtime_keys::kSchedule)) {
      tombstones_.push_back(e.key);  // deleted (swept if this epoch is taken over as is)
      continue;
    }
    if (key->kind == runtime_keys::kInput) {
      actor.input = e.value;
    } else if (key->kind == runtime_keys::kConn) {
      auto conn = runtime_keys::decode_conn(e.value);
      if (!conn) {
        co_return fail(conn.error());
      }
      actor.conns.push_back(std::move(*conn));
    } else if (key->kind == runtime_keys::kSchedule) {
      auto schedule = runtime_keys::decode_schedule(e.value);
      if (!schedule) {
        co_return fail(schedule.error());
      }
      actor.schedules.push_back(std::move(*schedule));
    }
  }
  std::sort(actor.conns.begin(), actor.conns.end(),
            [](const auto& x, const auto& y) { return x.conn_id < y.conn_id; });
  std::sort(actor.schedules.begin(), actor.schedules.end(), [](const auto& x, const auto& y) {
    return x.trigger_at != y.trigger_at ? x.trigger_at < y.trigger_at : x.event_id < y.event_id;
  });
  if (head.form == runtime_keys::StateForm::kInline) {
    actor.state = head.inline_state;
  } else if (head.form == runtime_keys::StateForm::kChunked) {
    // A bounded number of chunks per request (8 x 120 KiB), never the whole state at once.
    std::string state;
    state.reserve(head.size);
    constexpr std::uint32_t kPerGet = 8;
    for (std::uint32_t first = 0; first < head.chunks; first += kPerGet) {
      std::vector<std::string> keys;
      for (std::uint32_t c = first; c < std::min(head.chunks, first + kPerGet); ++c) {
        keys.push_back(runtime_keys::chunk_key(epoch, head.slot, c));
      }
      auto get_op = kv_.get(std::move(keys));
      auto got = co_await std::move(get_op);
      if (!got) {
        co_return fail(got.error());
      }
      for (auto& value : *got) {
        if (!value) {
          co_return fail(Error{"engine", "corrupt_record",
                               "Stored actor record is corrupt: a state chunk is missing",
                               std::nullopt, false});
        }
        state += *value;
      }
    }
    if (state.size() != head.size) {
      co_return fail(Error{"engine", "corrupt_record",
                           "Stored actor record is corrupt: the state's chunks do not add up",
                           std::nullopt, false});
    }
    actor.state = std::move(state);
  }
  co_return actor;
}

Task<Result<runtime_keys::Head>> KvActorStore::write_chunks(const std::string& state,
                                                            std::uint8_t slot) {
  runtime_keys::Head head = head_;
  head.form = runtime_keys::StateForm::kChunked;
  head.inline_state.clear();
  head.slot = slot;
  head.size = state.size();
  head.chunks = static_cast<std::uint32_t>((state.size() + runtime_keys::kChunkBytes - 1)
                                           / runtime_keys::kChunkBytes);
  storage::KvBatch chunks;
  for (std::uint32_t c = 0; c < head.chunks; ++c) {
    chunks.put(runtime_keys::chunk_key(epoch_, slot, c),
               state.substr(c * runtime_keys::kChunkBytes, runtime_keys::kChunkBytes));
  }
  // Not one atomic write: nothing names these keys until the head does.
  for (auto& request : journal::apply_requests(chunks.normalized())) {
    auto op = kv_.send(std::move(request));
    if (auto sent = co_await std::move(op); !sent) {
      co_return fail(sent.error());
    }
  }
  co_return head;
}

Task<Result<void>> KvActorStore::take_over(const storage::PersistedActor& actor, bool legacy) {
  tombstones_.clear();  // they go with the older epochs
  epoch_ = generation_;
  head_ = runtime_keys::owned_by(generation_);
  head_.has_initialized = actor.has_initialized;
  if (actor.state) {
    if (actor.state->size() <= runtime_keys::kInlineStateBytes) {
      head_.form = runtime_keys::StateForm::kInline;
      head_.inline_state = *actor.state;
    } else {
      auto chunks_op = write_chunks(*actor.state, 0);
      auto head = co_await std::move(chunks_op);
      if (!head) {
        co_return fail(head.error());
      }
      head_ = std::move(*head);
    }
  }
  storage::KvBatch batch;
  // A record of the old format kept no input: the start command's is the one to keep.
  if (const auto& input = actor.input ? actor.input : input_; input && actor.has_initialized) {
    batch.put(runtime_keys::input_key(epoch_), *input);
  }
  for (const auto& c : actor.conns) {
    batch.put(runtime_keys::conn_key(epoch_, c.conn_id), runtime_keys::encode_conn(c));
  }
  for (const auto& s : actor.schedules) {
    batch.put(runtime_keys::schedule_key(epoch_, s.event_id), runtime_keys::encode_schedule(s));
  }
  batch.put(runtime_keys::head_key(epoch_), runtime_keys::encode_head(head_));
  auto write_op = kv_.write(std::move(batch));
  if (auto written = co_await std::move(write_op); !written) {
    co_return written;
  }
  head_written_ = true;
  auto clean_op = take_over_cleanup(legacy);
  co_await std::move(clean_op);
  co_return Result<void>{};
}

Task<void> KvActorStore::take_over_cleanup(bool legacy) {
  // What older epochs left (their stale owners may still write there: nobody reads it), and the
  // unnamed chunk slot of ours (a crash between a state's chunks and its head).
  auto records_op = clean(runtime_keys::records_before(epoch_));
  co_await std::move(records_op);
  auto chunks_op = clean(runtime_keys::chunks_before(epoch_));
  co_await std::move(chunks_op);
  if (legacy) {
    auto legacy_op = clean({std::string(1, kRecordPrefix), std::string(1, kRecordPrefix + 1)});
    co_await std::move(legacy_op);
  }
}

Task<void> KvActorStore::sweep_tombstones() {
  while (!tombstones_.empty()) {
    const std::size_t n = std::min(tombstones_.size(), kTombstonesPerDelete);
    envoy::KvDeleteRequest del;
    del.keys.assign(tombstones_.begin(), tombstones_.begin() + static_cast<std::ptrdiff_t>(n));
    tombstones_.erase(tombstones_.begin(), tombstones_.begin() + static_cast<std::ptrdiff_t>(n));
    auto op = kv_.send(std::move(del));
    if (auto deleted = co_await std::move(op); !deleted) {
      // They read as absent all the same; the next take-over deletes them.
      log::warn("actor {}: could not delete tombstones: {}", actor_id_, deleted.error().message);
      tombstones_.clear();
    }
  }
}

Task<void> KvActorStore::clean(std::pair<std::string, std::string> range) {
  auto op = kv_.send(envoy::KvDeleteRangeRequest{std::move(range.first), std::move(range.second)});
  if (auto deleted = co_await std::move(op); !deleted) {
    log::warn("actor {}: could not delete keys nothing reads: {}", actor_id_,
              deleted.error().message);
  }
}

Task<Result<void>> KvActorStore::commit(storage::ActorWrite write) {
  if (sealed_) {
    co_return fail(Error{"engine", "store_closed", "Actor " + actor_id_ + " wrote after it stopped",
                         std::nullopt, false});
  }
  std::vector<storage::PersistedConn> tunneled;
  if (on_conns_durable_) {
    for (const auto& c : write.conn_upserts) {
      if (!c.gateway_id.empty()) {
        tunneled.push_back(c);
      }
    }
  }
  runtime_keys::Head next = head_;
  storage::KvBatch batch;
  if (write.has_initialized) {
    if (*write.has_initialized && !head_.has_initialized && input_) {
      batch.put(runtime_keys::input_key(epoch_), *input_);
    }
    next.has_initialized = *write.has_initialized;
  }
  if (write.state) {
    if (write.state->size() <= runtime_keys::kInlineStateBytes) {
      next.form = runtime_keys::StateForm::kInline;
      next.inline_state = std::move(*write.state);
      next.slot = 0;
      next.chunks = 0;
      next.size = 0;
    } else {
      // Into the slot the head does not name, so the current state stays whole until the head
      // names the new one.
      const std::uint8_t slot = head_.form == runtime_keys::StateForm::kChunked
                                    ? static_cast<std::uint8_t>(1 - head_.slot)
                                    : std::uint8_t{0};
      auto chunks_op = write_chunks(*write.state, slot);
      auto head = co_await std::move(chunks_op);
      if (!head) {
        co_return fail(head.error());
      }
      next = std::move(*head);
      next.has_initialized = write.has_initialized.value_or(head_.has_initialized);
    }
  }
  for (const auto& c : write.conn_upserts) {
    batch.put(runtime_keys::conn_key(epoch_, c.conn_id), runtime_keys::encode_conn(c));
  }
  for (const auto& s : write.schedule_upserts) {
    batch.put(runtime_keys::schedule_key(epoch_, s.event_id), runtime_keys::encode_schedule(s));
  }
  if (!tombstones_.empty()) {
    // A key put again is no tombstone any more (ids are unique, but nothing here relies on it).
    for (const auto& op : batch.ops()) {
      std::erase(tombstones_, std::get<storage::KvPut>(op).key);
    }
  }
  if (!head_written_ || next != head_) {
    batch.put(runtime_keys::head_key(epoch_), runtime_keys::encode_head(next));
  }
  // Deletes next to puts become tombstones, so that the commit stays one request (file comment
  // of runtime_keys.hpp); alone, they are deletes.
  std::vector<std::string> deleted;
  for (const auto& id : write.conn_deletes) {
    deleted.push_back(runtime_keys::conn_key(epoch_, id));
  }
  for (const auto& id : write.schedule_deletes) {
    deleted.push_back(runtime_keys::schedule_key(epoch_, id));
  }
  const bool tombstones = !batch.empty() || !write.kv.empty();
  for (auto& key : deleted) {
    if (tombstones) {
      batch.put(key, std::string());
    } else {
      batch.remove(key);
    }
  }
  batch.append(std::move(write.kv));
  auto op = kv_.write(std::move(batch));
  auto done = co_await std::move(op);
  if (!done) {
    co_return done;
  }
  const bool chunks_dropped =
      head_.form == runtime_keys::StateForm::kChunked
      && (next.form != runtime_keys::StateForm::kChunked || next.slot != head_.slot);
  const std::uint8_t old_slot = head_.slot;
  head_ = std::move(next);
  head_written_ = true;
  if (chunks_dropped) {
    auto clean_op = clean(runtime_keys::slot_chunks(epoch_, old_slot));
    co_await std::move(clean_op);
  }
  if (tombstones) {
    tombstones_.insert(tombstones_.end(), deleted.begin(), deleted.end());
    if (tombstones_.size() >= kTombstonesPerDelete) {
      auto sweep_op = sweep_tombstones();
      co_await std::move(sweep_op);
    }
  }
  if (!tunneled.empty()) {
    on_conns_durable_(std::move(tunneled));
  }
  co_return done;
}

Task<void> KvActorStore::close() {
  if (sealed_) {
    co_return;
  }
  sealed_ = true;
  if (!head_written_) {
    co_return;  // nothing was ever written: the next generation starts fresh anyway
  }
  if (!tombstones_.empty()) {
    auto sweep_op = sweep_tombstones();
    co_await std::move(sweep_op);
  }
  head_.sealed = true;
  auto op = kv_.send(
      envoy::KvPutRequest{{runtime_keys::head_key(epoch_)}, {runtime_keys::encode_head(head_)}});
  if (auto sealed = co_await std::move(op); !sealed) {
    // The next generation copies the keys instead of taking them over: slower, still correct.
    log::warn("actor {}: could not seal its keys: {}", actor_id_, sealed.error().message);
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
