#include "storage/kv_actor_store.hpp"

#include "storage/runtime_records.hpp"
#include "util/log.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <string_view>
#include <variant>
#include <vector>

namespace rivetkit::storage {

namespace {

/// A connection's key as it would be without its message indexes.
std::string cold_encoding(PersistedConn conn) {
  conn.server_message_index = 0;
  conn.client_message_index = 0;
  return runtime_records::encode_conn(conn);
}

std::optional<std::int64_t> earliest(const std::multiset<std::int64_t>& times) {
  return times.empty() ? std::nullopt : std::optional<std::int64_t>(*times.begin());
}

std::size_t index_table_bytes(const runtime_records::Head& head) {
  std::size_t bytes = 0;
  for (const auto& entry : head.indexes) {
    bytes += runtime_records::index_entry_bytes(entry.first);
  }
  return bytes;
}

}  // namespace

KvActorStore::KvActorStore(std::string actor_id,
                           std::unique_ptr<ActorKv> kv,
                           KvActorStoreOptions options)
    : actor_id_(std::move(actor_id)),
      kv_(std::move(kv)),
      options_(std::move(options)),
      generation_(options_.generation),
      epoch_(options_.fenced ? options_.generation : 0),
      head_(runtime_records::owned_by(options_.generation)) {}

Task<Result<PersistedActor>> KvActorStore::load() {
  auto op = read_and_own();
  auto actor = co_await std::move(op);
  loaded_ = actor.has_value();
  co_return actor;
}

Task<Result<PersistedActor>> KvActorStore::read_and_own() {
  // A commit a crash cut short past its commit point is finished first: what follows reads it.
  auto recover_op = kv_->recover();
  if (auto recovered = co_await std::move(recover_op); !recovered) {
    co_return fail(recovered.error());
  }
  // One listing for the records of every epoch and those of an earlier format (which sort
  // before them; engine mode's journal keys between are gone after recover()).
  KvQuery query;
  query.start = options_.legacy ? options_.legacy->start : runtime_records::all_records().first;
  query.end = runtime_records::all_records().second;
  auto list_op = kv_->list(std::move(query));
  auto listed = co_await std::move(list_op);
  if (!listed) {
    co_return fail(listed.error());
  }
  std::map<std::uint32_t, std::vector<KvEntry>> epochs;
  std::vector<KvEntry> legacy;
  for (auto& entry : *listed) {
    if (options_.legacy && entry.key < options_.legacy->end) {
      legacy.push_back(std::move(entry));
    } else if (auto key = runtime_records::parse_record_key(entry.key)) {
      epochs[key->epoch].push_back(std::move(entry));
    }
  }
  if (options_.fenced && !epochs.empty() && epochs.rbegin()->first > generation_) {
    co_return fail(stale(epochs.rbegin()->first));
  }
  // The newest epoch with a head (an epoch without one is a copy a crash cut short).
  for (auto it = epochs.rbegin(); it != epochs.rend(); ++it) {
    const std::string head_key = runtime_records::head_key(it->first);
    auto head_it = std::find_if(it->second.begin(), it->second.end(),
                                [&](const KvEntry& e) { return e.key == head_key; });
    if (head_it == it->second.end()) {
      continue;
    }
    auto head = runtime_records::decode_head(head_it->value);
    if (!head) {
      co_return fail(head.error());
    }
    if (options_.fenced && head->owner > generation_) {
      co_return fail(stale(head->owner));
    }
    auto read_op = read_epoch(it->first, *head, it->second);
    auto actor = co_await std::move(read_op);
    if (!actor) {
      co_return fail(actor.error());
    }
    const bool newest = it == epochs.rbegin();
    if (!options_.fenced) {
      // One process owns the data (local mode): the epoch is ours, nothing to hand over.
      epoch_ = it->first;
      head_ = *head;
      head_written_ = true;
    } else if ((head->sealed || head->owner == generation_) && newest) {
      // Handed over cleanly: the epoch is ours as it is.
      epoch_ = it->first;
      head_ = *head;
      head_.owner = generation_;
      head_.sealed = false;
      KvBatch head_put;
      head_put.put(runtime_records::head_key(epoch_), runtime_records::encode_head(head_));
      auto put_op = kv_->write(std::move(head_put));
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
    if (options_.input) {
      actor->input = options_.input;
    }
    co_return std::move(*actor);
  }
  if (!legacy.empty()) {
    auto decoded = options_.legacy->decode(legacy);
    if (!decoded) {
      co_return fail(decoded.error());
    }
    if (*decoded) {
      log::info("actor {}: moving its records of an earlier format into keys", actor_id_);
      auto copy_op = take_over(**decoded, true);
      if (auto copied = co_await std::move(copy_op); !copied) {
        co_return fail(copied.error());
      }
      PersistedActor actor = std::move(**decoded);
      actor.input = options_.input;
      co_return actor;
    }
  }
  // A new actor: nothing to read; its first commit writes the head.
  epoch_ = options_.fenced ? generation_ : 0;
  head_ = runtime_records::owned_by(generation_);
  PersistedActor actor;
  actor.input = options_.input;
  co_return actor;
}

Error KvActorStore::stale(std::uint32_t newer) const {
  return Error{"storage", "stale_generation",
               "Actor " + actor_id_ + " generation " + std::to_string(generation_)
                   + " found data of generation " + std::to_string(newer)
                   + ": a newer instance owns it, this one does not start",
               std::nullopt, false};
}

Task<Result<PersistedActor>> KvActorStore::read_epoch(std::uint32_t epoch,
                                                      const runtime_records::Head& head,
                                                      const std::vector<KvEntry>& records) {
  PersistedActor actor;
  actor.has_initialized = head.has_initialized;
  cold_.clear();
  schedule_at_.clear();
  trigger_times_.clear();
  for (const auto& e : records) {
    auto key = runtime_records::parse_record_key(e.key);
    if (!key) {
      continue;
    }
    if (e.value.empty()
        && (key->kind == runtime_records::kConn || key->kind == runtime_records::kSchedule)) {
      tombstones_.push_back(e.key);  // deleted (swept if this epoch is taken over as is)
      continue;
    }
    if (key->kind == runtime_records::kInput) {
      actor.input = e.value;
    } else if (key->kind == runtime_records::kConn) {
      auto conn = runtime_records::decode_conn(e.value);
      if (!conn) {
        co_return fail(conn.error());
      }
      cold_[conn->conn_id] = cold_encoding(*conn);
      if (auto idx = head.indexes.find(conn->conn_id); idx != head.indexes.end()) {
        conn->server_message_index = idx->second.server;
        conn->client_message_index = idx->second.client;
      }
      actor.conns.push_back(std::move(*conn));
    } else if (key->kind == runtime_records::kSchedule) {
      auto schedule = runtime_records::decode_schedule(e.value);
      if (!schedule) {
        co_return fail(schedule.error());
      }
      schedule_at_[schedule->event_id] = schedule->trigger_at;
      trigger_times_.insert(schedule->trigger_at);
      actor.schedules.push_back(std::move(*schedule));
    }
  }
  std::sort(actor.conns.begin(), actor.conns.end(),
            [](const auto& x, const auto& y) { return x.conn_id < y.conn_id; });
  std::sort(actor.schedules.begin(), actor.schedules.end(), [](const auto& x, const auto& y) {
    return x.trigger_at != y.trigger_at ? x.trigger_at < y.trigger_at : x.event_id < y.event_id;
  });
  if (head.form == runtime_records::StateForm::kInline) {
    actor.state = head.inline_state;
  } else if (head.form == runtime_records::StateForm::kChunked) {
    // A bounded number of chunks per request (8 x 120 KiB), never the whole state at once.
    std::string state;
    state.reserve(head.size);
    constexpr std::uint32_t kPerGet = 8;
    for (std::uint32_t first = 0; first < head.chunks; first += kPerGet) {
      std::vector<std::string> keys;
      for (std::uint32_t c = first; c < std::min(head.chunks, first + kPerGet); ++c) {
        keys.push_back(runtime_records::chunk_key(epoch, head.slot, c));
      }
      auto get_op = kv_->get(std::move(keys));
      auto got = co_await std::move(get_op);
      if (!got) {
        co_return fail(got.error());
      }
      for (auto& value : *got) {
        if (!value) {
          co_return fail(Error{"storage", "corrupt_record",
                               "Stored actor record is corrupt: a state chunk is missing",
                               std::nullopt, false});
        }
        state += *value;
      }
    }
    if (state.size() != head.size) {
      co_return fail(Error{"storage", "corrupt_record",
                           "Stored actor record is corrupt: the state's chunks do not add up",
                           std::nullopt, false});
    }
    actor.state = std::move(state);
  }
  co_return actor;
}

Task<Result<runtime_records::Head>> KvActorStore::write_chunks(const std::string& state,
                                                               std::uint8_t slot) {
  runtime_records::Head head = head_;
  head.form = runtime_records::StateForm::kChunked;
  head.inline_state.clear();
  head.slot = slot;
  head.size = state.size();
  head.chunks = static_cast<std::uint32_t>((state.size() + runtime_records::kChunkBytes - 1)
                                           / runtime_records::kChunkBytes);
  KvBatch chunks;
  for (std::uint32_t c = 0; c < head.chunks; ++c) {
    chunks.put(runtime_records::chunk_key(epoch_, slot, c),
               state.substr(c * runtime_records::kChunkBytes, runtime_records::kChunkBytes));
  }
  // Not one atomic write: nothing names these keys until the head does.
  auto op = kv_->write_loose(std::move(chunks));
  if (auto sent = co_await std::move(op); !sent) {
    co_return fail(sent.error());
  }
  co_return head;
}

Task<Result<void>> KvActorStore::take_over(const PersistedActor& actor, bool legacy) {
  tombstones_.clear();  // they go with the older epochs
  epoch_ = options_.fenced ? generation_ : 0;
  head_ = runtime_records::owned_by(generation_);
  head_.has_initialized = actor.has_initialized;
  if (actor.state) {
    if (actor.state->size() <= runtime_records::kInlineStateBytes) {
      head_.form = runtime_records::StateForm::kInline;
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
  KvBatch batch;
  // A record of the old format kept no input: the start command's is the one to keep.
  if (const auto& input = actor.input ? actor.input : options_.input;
      input && actor.has_initialized && options_.store_input) {
    batch.put(runtime_records::input_key(epoch_), *input);
  }
  cold_.clear();
  for (const auto& c : actor.conns) {
    // With their indexes: the new head's index table starts empty.
    batch.put(runtime_records::conn_key(epoch_, c.conn_id), runtime_records::encode_conn(c));
    cold_[c.conn_id] = cold_encoding(c);
  }
  schedule_at_.clear();
  trigger_times_.clear();
  for (const auto& s : actor.schedules) {
    batch.put(runtime_records::schedule_key(epoch_, s.event_id),
              runtime_records::encode_schedule(s));
    schedule_at_[s.event_id] = s.trigger_at;
    trigger_times_.insert(s.trigger_at);
  }
  batch.put(runtime_records::head_key(epoch_), runtime_records::encode_head(head_));
  auto write_op = write_commit(std::move(batch), NextAlarm{earliest(trigger_times_)});
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
  auto records_op = clean(runtime_records::records_before(epoch_));
  co_await std::move(records_op);
  auto chunks_op = clean(runtime_records::chunks_before(epoch_));
  co_await std::move(chunks_op);
  if (legacy) {
    auto legacy_op = clean({options_.legacy->start, options_.legacy->end});
    co_await std::move(legacy_op);
  }
}

Task<void> KvActorStore::sweep_tombstones() {
  while (!tombstones_.empty()) {
    const std::size_t n = std::min(tombstones_.size(), kTombstonesPerDelete);
    KvBatch del;
    for (std::size_t i = 0; i < n; ++i) {
      del.remove(std::move(tombstones_[i]));
    }
    tombstones_.erase(tombstones_.begin(), tombstones_.begin() + static_cast<std::ptrdiff_t>(n));
    auto op = kv_->write_loose(std::move(del));
    if (auto deleted = co_await std::move(op); !deleted) {
      // They read as absent all the same; the next take-over deletes them.
      log::warn("actor {}: could not delete tombstones: {}", actor_id_, deleted.error().message);
      tombstones_.clear();
    }
  }
}

Task<void> KvActorStore::clean(std::pair<std::string, std::string> range) {
  KvBatch del;
  del.remove_range(std::move(range.first), std::move(range.second));
  auto op = kv_->write_loose(std::move(del));
  if (auto deleted = co_await std::move(op); !deleted) {
    log::warn("actor {}: could not delete keys nothing reads: {}", actor_id_,
              deleted.error().message);
  }
}

Task<Result<void>> KvActorStore::commit(ActorWrite write) {
  if (sealed_) {
    co_return fail(Error{"storage", "store_closed",
                         "Actor " + actor_id_ + " wrote after it stopped", std::nullopt, false});
  }
  if (!loaded_) {
    // A commit builds on what is stored (the head, the connections' keys): read it first.
    auto load_op = load();
    if (auto loaded = co_await std::move(load_op); !loaded) {
      co_return fail(loaded.error());
    }
  }
  std::vector<PersistedConn> tunneled;
  if (options_.on_conns_durable) {
    for (const auto& c : write.conn_upserts) {
      if (!c.tunnel_id.empty()) {
        tunneled.push_back(c);
      }
    }
  }
  runtime_records::Head next = head_;
  KvBatch batch;
  if (write.has_initialized) {
    if (*write.has_initialized && !head_.has_initialized && options_.input
        && options_.store_input) {
      batch.put(runtime_records::input_key(epoch_), *options_.input);
    }
    next.has_initialized = *write.has_initialized;
  }
  if (write.state) {
    if (write.state->size() <= runtime_records::kInlineStateBytes) {
      next.form = runtime_records::StateForm::kInline;
      next.inline_state = std::move(*write.state);
      next.slot = 0;
      next.chunks = 0;
      next.size = 0;
    } else {
      // Into the slot the head does not name, so the current state stays whole until the head
      // names the new one.
      const std::uint8_t slot = head_.form == runtime_records::StateForm::kChunked
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
  // A connection's indexes go into the head's table (while it has room); its key is written
  // only when something else in it changed, or when the table has no room for it.
  std::vector<std::pair<std::string, std::string>> cold_written;
  std::size_t table_bytes = index_table_bytes(next);
  for (const auto& c : write.conn_upserts) {
    std::string cold = cold_encoding(c);
    auto in_table = next.indexes.find(c.conn_id);
    if (in_table == next.indexes.end()
        && table_bytes + runtime_records::index_entry_bytes(c.conn_id)
               <= runtime_records::kIndexTableBytes) {
      in_table = next.indexes.emplace(c.conn_id, runtime_records::MessageIndexes{}).first;
      table_bytes += runtime_records::index_entry_bytes(c.conn_id);
    }
    if (in_table != next.indexes.end()) {
      in_table->second.server = c.server_message_index;
      in_table->second.client = c.client_message_index;
    }
    auto known = cold_.find(c.conn_id);
    if (in_table == next.indexes.end() || known == cold_.end() || known->second != cold) {
      batch.put(runtime_records::conn_key(epoch_, c.conn_id), runtime_records::encode_conn(c));
      cold_written.emplace_back(c.conn_id, std::move(cold));
    }
  }
  for (const auto& id : write.conn_deletes) {
    next.indexes.erase(id);
  }
  for (const auto& s : write.schedule_upserts) {
    batch.put(runtime_records::schedule_key(epoch_, s.event_id),
              runtime_records::encode_schedule(s));
  }
  if (!tombstones_.empty()) {
    // A key put again is no tombstone any more (ids are unique, but nothing here relies on it).
    for (const auto& op : batch.ops()) {
      std::erase(tombstones_, std::get<KvPut>(op).key);
    }
  }
  // Fenced, the first commit of a generation names it the epoch's owner. Records need a head
  // (a load takes an epoch without one for a copy a crash cut short); an unfenced actor that only
  // ever wrote KV needs none.
  if ((!head_written_ && (options_.fenced || !batch.empty())) || next != head_) {
    batch.put(runtime_records::head_key(epoch_), runtime_records::encode_head(next));
  }
  // Deletes next to puts become tombstones, so that the commit stays one request (file comment
  // of runtime_records.hpp); alone, they are deletes.
  std::vector<std::string> deleted;
  for (const auto& id : write.conn_deletes) {
    deleted.push_back(runtime_records::conn_key(epoch_, id));
  }
  for (const auto& id : write.schedule_deletes) {
    deleted.push_back(runtime_records::schedule_key(epoch_, id));
  }
  const bool tombstones = kv_->mixed_writes_cost_more() && (!batch.empty() || !write.kv.empty());
  for (auto& key : deleted) {
    if (tombstones) {
      batch.put(key, std::string());
    } else {
      batch.remove(key);
    }
  }
  batch.append(std::move(write.kv));
  // The next alarm, when schedules change (rarely: copies of the two small indexes).
  std::optional<NextAlarm> alarm;
  std::unordered_map<std::string, std::int64_t> schedule_at;
  std::multiset<std::int64_t> trigger_times;
  const bool schedules_changed = !write.schedule_upserts.empty() || !write.schedule_deletes.empty();
  if (schedules_changed) {
    schedule_at = schedule_at_;
    trigger_times = trigger_times_;
    auto drop = [&](const std::string& id) {
      if (auto it = schedule_at.find(id); it != schedule_at.end()) {
        trigger_times.erase(trigger_times.find(it->second));
        schedule_at.erase(it);
      }
    };
    for (const auto& sch : write.schedule_upserts) {
      drop(sch.event_id);
      schedule_at[sch.event_id] = sch.trigger_at;
      trigger_times.insert(sch.trigger_at);
    }
    for (const auto& id : write.schedule_deletes) {
      drop(id);
    }
    if (earliest(trigger_times) != earliest(trigger_times_)) {
      alarm = NextAlarm{earliest(trigger_times)};
    }
  }
  auto op = write_commit(std::move(batch), alarm);
  auto done = co_await std::move(op);
  if (!done) {
    co_return done;
  }
  if (schedules_changed) {
    schedule_at_ = std::move(schedule_at);
    trigger_times_ = std::move(trigger_times);
  }
  const bool chunks_dropped =
      head_.form == runtime_records::StateForm::kChunked
      && (next.form != runtime_records::StateForm::kChunked || next.slot != head_.slot);
  const std::uint8_t old_slot = head_.slot;
  head_ = std::move(next);
  head_written_ = true;
  for (auto& [id, cold] : cold_written) {
    cold_[id] = std::move(cold);
  }
  for (const auto& id : write.conn_deletes) {
    cold_.erase(id);
  }
  if (chunks_dropped) {
    auto clean_op = clean(runtime_records::slot_chunks(epoch_, old_slot));
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
    options_.on_conns_durable(std::move(tunneled));
  }
  co_return done;
}

Task<Result<void>> KvActorStore::write_commit(KvBatch batch, std::optional<NextAlarm>) {
  return kv_->write(std::move(batch));
}

Task<void> KvActorStore::close() {
  if (!options_.fenced || sealed_) {
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
  KvBatch seal;
  seal.put(runtime_records::head_key(epoch_), runtime_records::encode_head(head_));
  auto op = kv_->write(std::move(seal));
  if (auto sealed = co_await std::move(op); !sealed) {
    // The next generation copies the keys instead of taking them over: slower, still correct.
    log::warn("actor {}: could not seal its keys: {}", actor_id_, sealed.error().message);
  }
}

}  // namespace rivetkit::storage
