// Envoy protocol v8 decoder (envoy-protocol.md §3.1). One `get` overload per schema type, in wire
// order, mirroring encode.cpp. Every read is checked; the first failure records a message naming
// the innermost type being read and the byte offset, and every caller then unwinds with false.

#include "protocol/bare/bare.hpp"
#include "protocol/envoy/codec.hpp"

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace rivetkit::protocol::envoy {

Error envoy_decode_error(std::string message) {
  return Error{"envoy", "invalid_message", std::move(message), std::nullopt, false};
}

namespace {

// Upper bound for an up-front reserve(); longer lists grow as items are actually read, so a large
// (but in-bounds) count never allocates more than the items that are really present.
constexpr std::size_t kMaxReserve = 1024;

class Decoder {
 public:
  explicit Decoder(std::string_view in) : r_(in), size_(in.size()) {}

  const std::string& error() const { return error_; }

  /// Fails with a message unless the whole input was consumed.
  bool finish() {
    if (!r_.at_end()) {
      return fail(std::to_string(r_.remaining()) + " trailing bytes");
    }
    return true;
  }

  bool fail(std::string what) {
    if (error_.empty()) {
      error_ = std::move(what) + " (at byte " + std::to_string(size_ - r_.remaining()) + ")";
    }
    return false;
  }
  /// `ok` is the result of one or more primitive reads of `type`.
  bool check(bool ok, const char* type) {
    return ok || fail(std::string("truncated or malformed ") + type);
  }

  // ---- helpers --------------------------------------------------------------------------------

  template <class Variant>
  bool variant(Variant& v, const char* type) {
    std::uint8_t tag = 0;
    if (!r_.u8(tag)) {
      return fail(std::string("truncated ") + type + " tag");
    }
    if (tag >= std::variant_size_v<Variant>) {
      return fail(std::string("unknown ") + type + " tag " + std::to_string(tag));
    }
    return emplace_alternative(v, tag, std::make_index_sequence<std::variant_size_v<Variant>>{});
  }

  template <class Variant, std::size_t... I>
  bool emplace_alternative(Variant& v, std::size_t tag, std::index_sequence<I...>) {
    bool ok = false;
    static_cast<void>(((tag == I ? (ok = get(v.template emplace<I>()), true) : false) || ...));
    return ok;
  }

  template <class Enum>
  bool enumeration(Enum& e, std::uint8_t count, const char* type) {
    std::uint8_t tag = 0;
    if (!r_.u8(tag)) {
      return fail(std::string("truncated ") + type);
    }
    if (tag >= count) {
      return fail(std::string("unknown ") + type + " value " + std::to_string(tag));
    }
    e = static_cast<Enum>(tag);
    return true;
  }

  /// Reads a list count and checks it against the bytes that remain (`min_item` = the smallest
  /// possible encoding of one item, at least 1).
  bool count(std::size_t& n, std::size_t min_item, const char* type) {
    std::uint64_t raw = 0;
    if (!r_.uint(raw)) {
      return fail(std::string("truncated ") + type + " length");
    }
    if (raw > r_.remaining() / min_item) {
      return fail(std::string(type) + " length " + std::to_string(raw) + " exceeds the remaining "
                  + std::to_string(r_.remaining()) + " bytes");
    }
    n = static_cast<std::size_t>(raw);
    return true;
  }

  template <class T, class ReadItem>
  bool list(std::vector<T>& out, std::size_t min_item, const char* type, ReadItem&& read_item) {
    std::size_t n = 0;
    if (!count(n, min_item, type)) {
      return false;
    }
    out.clear();
    out.reserve(std::min(n, kMaxReserve));
    for (std::size_t i = 0; i < n; ++i) {
      if (!read_item(out.emplace_back())) {
        return false;
      }
    }
    return true;
  }
  template <class T>
  bool list(std::vector<T>& out, std::size_t min_item, const char* type) {
    return list(out, min_item, type, [this](T& item) { return get(item); });
  }
  bool data_list(std::vector<std::string>& out, const char* type) {
    return list(out, 1, type,
                [this, type](std::string& item) { return check(r_.data(item), type); });
  }
  bool str_list(std::vector<std::string>& out, const char* type) {
    return list(out, 1, type,
                [this, type](std::string& item) { return check(r_.str(item), type); });
  }
  bool u32_list(std::vector<std::uint32_t>& out, const char* type) {
    return list(out, 4, type,
                [this, type](std::uint32_t& item) { return check(r_.u32(item), type); });
  }

  template <class T, class ReadValue>
  bool opt(std::optional<T>& v, const char* type, ReadValue&& read_value) {
    bool present = false;
    if (!r_.optional_tag(present)) {
      return fail(std::string("truncated or invalid optional marker in ") + type);
    }
    if (!present) {
      v.reset();
      return true;
    }
    return read_value(v.emplace());
  }
  bool opt_u64(std::optional<std::uint64_t>& v, const char* type) {
    return opt(v, type, [this, type](std::uint64_t& x) { return check(r_.u64(x), type); });
  }
  bool opt_i64(std::optional<std::int64_t>& v, const char* type) {
    return opt(v, type, [this, type](std::int64_t& x) { return check(r_.i64(x), type); });
  }
  bool opt_u32(std::optional<std::uint32_t>& v, const char* type) {
    return opt(v, type, [this, type](std::uint32_t& x) { return check(r_.u32(x), type); });
  }
  bool opt_u16(std::optional<std::uint16_t>& v, const char* type) {
    return opt(v, type, [this, type](std::uint16_t& x) { return check(r_.u16(x), type); });
  }
  bool opt_bool(std::optional<bool>& v, const char* type) {
    return opt(v, type, [this, type](bool& x) { return check(r_.boolean(x), type); });
  }
  bool opt_str(std::optional<std::string>& v, const char* type) {
    return opt(v, type, [this, type](std::string& x) { return check(r_.str(x), type); });
  }
  bool opt_data(std::optional<std::string>& v, const char* type) {
    return opt(v, type, [this, type](std::string& x) { return check(r_.data(x), type); });
  }

  template <class V>
  bool unique_keys(const std::vector<std::pair<std::string, V>>& entries, const char* type) {
    std::vector<std::string_view> keys;
    keys.reserve(entries.size());
    for (const auto& entry : entries) {
      keys.emplace_back(entry.first);
    }
    std::sort(keys.begin(), keys.end());
    const auto dup = std::adjacent_find(keys.begin(), keys.end());
    if (dup != keys.end()) {
      return fail(std::string("duplicate key in ") + type);
    }
    return true;
  }
  bool headers(Headers& h, const char* type) {
    return list(h, 2, type,
                [this, type](std::pair<std::string, std::string>& kv) {
                  return check(r_.str(kv.first) && r_.str(kv.second), type);
                })
           && unique_keys(h, type);
  }
  bool fixed4(std::array<std::uint8_t, 4>& id, const char* type) {
    return check(r_.fixed(id), type);
  }

  // ---- KV -------------------------------------------------------------------------------------

  bool get(KvMetadata& v) { return check(r_.data(v.version) && r_.i64(v.update_ts), "KvMetadata"); }
  bool get(KvListAllQuery&) { return true; }
  bool get(KvListRangeQuery& v) {
    return check(r_.data(v.start) && r_.data(v.end) && r_.boolean(v.exclusive), "KvListRangeQuery");
  }
  bool get(KvListPrefixQuery& v) { return check(r_.data(v.key), "KvListPrefixQuery"); }
  bool get(KvGetRequest& v) { return data_list(v.keys, "KvGetRequest.keys"); }
  bool get(KvListRequest& v) {
    return variant(v.query, "KvListQuery") && opt_bool(v.reverse, "KvListRequest.reverse")
           && opt_u64(v.limit, "KvListRequest.limit");
  }
  bool get(KvPutRequest& v) {
    return data_list(v.keys, "KvPutRequest.keys") && data_list(v.values, "KvPutRequest.values");
  }
  bool get(KvDeleteRequest& v) { return data_list(v.keys, "KvDeleteRequest.keys"); }
  bool get(KvDeleteRangeRequest& v) {
    return check(r_.data(v.start) && r_.data(v.end), "KvDeleteRangeRequest");
  }
  bool get(KvDropRequest&) { return true; }
  bool get(KvErrorResponse& v) { return check(r_.str(v.message), "KvErrorResponse"); }
  bool get(KvGetResponse& v) {
    return data_list(v.keys, "KvGetResponse.keys") && data_list(v.values, "KvGetResponse.values")
           && list(v.metadata, 9, "KvGetResponse.metadata");
  }
  bool get(KvListResponse& v) {
    return data_list(v.keys, "KvListResponse.keys") && data_list(v.values, "KvListResponse.values")
           && list(v.metadata, 9, "KvListResponse.metadata");
  }
  bool get(KvPutResponse&) { return true; }
  bool get(KvDeleteResponse&) { return true; }
  bool get(KvDropResponse&) { return true; }

  // ---- SQLite ---------------------------------------------------------------------------------

  bool get(SqliteDirtyPage& v) {
    return check(r_.u32(v.pgno) && r_.data(v.bytes), "SqliteDirtyPage");
  }
  bool get(SqliteFetchedPage& v) {
    return check(r_.u32(v.pgno), "SqliteFetchedPage")
           && opt_data(v.bytes, "SqliteFetchedPage.bytes");
  }
  bool get(SqliteErrorResponse& v) {
    return check(r_.str(v.group) && r_.str(v.code) && r_.str(v.message), "SqliteErrorResponse");
  }
  bool get(SqliteGetPagesRequest& v) {
    return check(r_.str(v.actor_id), "SqliteGetPagesRequest.actorId")
           && u32_list(v.pgnos, "SqliteGetPagesRequest.pgnos")
           && opt_u64(v.expected_generation, "SqliteGetPagesRequest.expectedGeneration")
           && opt_u64(v.expected_head_txid, "SqliteGetPagesRequest.expectedHeadTxid");
  }
  bool get(SqliteGetPagesOk& v) {
    return list(v.pages, 5, "SqliteGetPagesOk.pages")
           && opt_u64(v.head_txid, "SqliteGetPagesOk.headTxid");
  }
  bool get(SqliteCommitRequest& v) {
    return check(r_.str(v.actor_id), "SqliteCommitRequest.actorId")
           && list(v.dirty_pages, 5, "SqliteCommitRequest.dirtyPages")
           && check(r_.u32(v.db_size_pages) && r_.i64(v.now_ms), "SqliteCommitRequest")
           && opt_u64(v.expected_generation, "SqliteCommitRequest.expectedGeneration")
           && opt_u64(v.expected_head_txid, "SqliteCommitRequest.expectedHeadTxid");
  }
  bool get(SqliteCommitOk& v) { return opt_u64(v.head_txid, "SqliteCommitOk.headTxid"); }
  bool get(SqliteCommitStageBeginRequest& v) {
    return check(r_.str(v.actor_id), "SqliteCommitStageBeginRequest.actorId")
           && opt_u64(v.expected_generation, "SqliteCommitStageBeginRequest.expectedGeneration")
           && opt_u64(v.expected_head_txid, "SqliteCommitStageBeginRequest.expectedHeadTxid");
  }
  bool get(SqliteCommitStageBeginOk& v) {
    return check(r_.u64(v.txid), "SqliteCommitStageBeginOk");
  }
  bool get(SqliteCommitStageSegmentRequest& v) {
    return check(r_.str(v.actor_id), "SqliteCommitStageSegmentRequest.actorId")
           && opt_u64(v.expected_generation, "SqliteCommitStageSegmentRequest.expectedGeneration")
           && check(r_.u64(v.txid) && r_.u32(v.first_pgno), "SqliteCommitStageSegmentRequest")
           && list(v.dirty_pages, 5, "SqliteCommitStageSegmentRequest.dirtyPages");
  }
  bool get(SqliteCommitStageSegmentOk& v) {
    return check(r_.u64(v.staged_bytes), "SqliteCommitStageSegmentOk");
  }
  bool get(SqliteCommitFinalizeRequest& v) {
    return check(r_.str(v.actor_id), "SqliteCommitFinalizeRequest.actorId")
           && opt_u64(v.expected_generation, "SqliteCommitFinalizeRequest.expectedGeneration")
           && check(r_.u64(v.txid) && r_.u32(v.new_db_size_pages) && r_.i64(v.now_ms),
                    "SqliteCommitFinalizeRequest")
           && u32_list(v.segment_first_pgnos, "SqliteCommitFinalizeRequest.segmentFirstPgnos");
  }
  bool get(SqliteCommitFinalizeOk& v) {
    return opt_u64(v.head_txid, "SqliteCommitFinalizeOk.headTxid");
  }
  bool get(SqliteValueNull&) { return true; }
  bool get(SqliteValueInteger& v) { return check(r_.i64(v.value), "SqliteValueInteger"); }
  bool get(SqliteValueFloat& v) { return check(r_.fixed(v.value), "SqliteValueFloat"); }
  bool get(SqliteValueText& v) { return check(r_.str(v.value), "SqliteValueText"); }
  bool get(SqliteValueBlob& v) { return check(r_.data(v.value), "SqliteValueBlob"); }
  bool get(SqliteValue& v) { return variant(v, "SqliteValue"); }
  bool get(std::vector<SqliteColumnValue>& row) { return list(row, 1, "SqliteColumnValue row"); }
  bool get(SqliteQueryResult& v) {
    return str_list(v.columns, "SqliteQueryResult.columns")
           && list(v.rows, 1, "SqliteQueryResult.rows");
  }
  bool get(SqliteExecuteResult& v) {
    return str_list(v.columns, "SqliteExecuteResult.columns")
           && list(v.rows, 1, "SqliteExecuteResult.rows")
           && check(r_.i64(v.changes), "SqliteExecuteResult.changes")
           && opt_i64(v.last_insert_row_id, "SqliteExecuteResult.lastInsertRowId");
  }
  bool params(std::optional<std::vector<SqliteBindParam>>& v, const char* type) {
    return opt(v, type, [this, type](std::vector<SqliteBindParam>& p) { return list(p, 1, type); });
  }
  bool get(SqliteExecRequest& v) {
    return check(
        r_.str(v.namespace_id) && r_.str(v.actor_id) && r_.u64(v.generation) && r_.str(v.sql),
        "SqliteExecRequest");
  }
  bool get(SqliteExecuteRequest& v) {
    return check(r_.str(v.namespace_id) && r_.str(v.actor_id) && r_.u64(v.generation)
                     && r_.str(v.sql),
                 "SqliteExecuteRequest")
           && params(v.params, "SqliteExecuteRequest.params");
  }
  bool get(SqliteBatchStatement& v) {
    return check(r_.str(v.sql), "SqliteBatchStatement.sql")
           && params(v.params, "SqliteBatchStatement.params");
  }
  bool get(SqliteExecuteBatchRequest& v) {
    return check(r_.str(v.namespace_id) && r_.str(v.actor_id) && r_.u64(v.generation),
                 "SqliteExecuteBatchRequest")
           && list(v.statements, 2, "SqliteExecuteBatchRequest.statements");
  }
  bool get(SqliteExecOk& v) { return get(v.result); }
  bool get(SqliteExecuteOk& v) { return get(v.result); }
  bool get(SqliteExecuteBatchOk& v) { return list(v.results, 11, "SqliteExecuteBatchOk.results"); }

  // ---- actor lifecycle ------------------------------------------------------------------------

  bool get(ActorName& v) { return check(r_.str(v.metadata), "ActorName"); }
  bool get(ActorConfig& v) {
    return check(r_.str(v.name), "ActorConfig.name") && opt_str(v.key, "ActorConfig.key")
           && check(r_.i64(v.create_ts), "ActorConfig.createTs")
           && opt_data(v.input, "ActorConfig.input");
  }
  bool get(ActorCheckpoint& v) {
    return check(r_.str(v.actor_id) && r_.u32(v.generation) && r_.i64(v.index), "ActorCheckpoint");
  }
  bool get(ActorIntentSleep&) { return true; }
  bool get(ActorIntentStop&) { return true; }
  bool get(ActorStateRunning&) { return true; }
  bool get(ActorStateStopped& v) {
    return enumeration(v.code, 2, "StopCode") && opt_str(v.message, "ActorStateStopped.message");
  }
  bool get(EventActorIntent& v) { return variant(v.intent, "ActorIntent"); }
  bool get(EventActorStateUpdate& v) { return variant(v.state, "ActorState"); }
  bool get(EventActorSetAlarm& v) { return opt_i64(v.alarm_ts, "EventActorSetAlarm.alarmTs"); }
  bool get(EventWrapper& v) { return get(v.checkpoint) && variant(v.inner, "Event"); }
  bool get(PreloadedKvEntry& v) {
    return check(r_.data(v.key) && r_.data(v.value), "PreloadedKvEntry") && get(v.metadata);
  }
  bool get(PreloadedKv& v) {
    return list(v.entries, 11, "PreloadedKv.entries")
           && data_list(v.requested_get_keys, "PreloadedKv.requestedGetKeys")
           && data_list(v.requested_prefixes, "PreloadedKv.requestedPrefixes");
  }
  bool get(HibernatingRequest& v) {
    return fixed4(v.gateway_id, "HibernatingRequest") && fixed4(v.request_id, "HibernatingRequest");
  }
  bool get(CommandStartActor& v) {
    return get(v.config) && list(v.hibernating_requests, 8, "CommandStartActor.hibernatingRequests")
           && opt(v.preloaded_kv, "CommandStartActor.preloadedKv",
                  [this](PreloadedKv& p) { return get(p); });
  }
  bool get(CommandStopActor& v) { return enumeration(v.reason, 5, "StopActorReason"); }
  bool get(CommandWrapper& v) { return get(v.checkpoint) && variant(v.inner, "Command"); }

  // ---- tunnel ---------------------------------------------------------------------------------

  bool get(MessageId& v) {
    return fixed4(v.gateway_id, "MessageId") && fixed4(v.request_id, "MessageId")
           && check(r_.u16(v.message_index), "MessageId");
  }
  bool get(HttpStreamAbortReason& v) {
    return enumeration(v.kind, 4, "HttpStreamAbortReason.kind")
           && opt_str(v.detail, "HttpStreamAbortReason.detail");
  }
  bool get(ToEnvoyRequestStart& v) {
    return check(r_.str(v.actor_id), "ToEnvoyRequestStart.actorId")
           && opt_u32(v.actor_generation, "ToEnvoyRequestStart.actorGeneration")
           && check(r_.str(v.method) && r_.str(v.path), "ToEnvoyRequestStart")
           && headers(v.headers, "ToEnvoyRequestStart.headers")
           && opt_data(v.body, "ToEnvoyRequestStart.body")
           && check(r_.boolean(v.stream) && r_.boolean(v.response_stream), "ToEnvoyRequestStart");
  }
  bool get(ToEnvoyRequestChunk& v) {
    return check(r_.data(v.body) && r_.boolean(v.finish), "ToEnvoyRequestChunk");
  }
  bool get(ToEnvoyRequestAbort& v) {
    return opt_str(v.actor_id, "ToEnvoyRequestAbort.actorId")
           && opt_u32(v.actor_generation, "ToEnvoyRequestAbort.actorGeneration") && get(v.reason);
  }
  bool get(ToEnvoyRequestBodyCancel&) { return true; }
  bool get(ToEnvoyResponseBodyWindowUpdate& v) {
    return check(r_.u64(v.consumed_bytes), "ToEnvoyResponseBodyWindowUpdate");
  }
  bool get(ToEnvoyWebSocketOpen& v) {
    return check(r_.str(v.actor_id), "ToEnvoyWebSocketOpen.actorId")
           && opt_u32(v.actor_generation, "ToEnvoyWebSocketOpen.actorGeneration")
           && check(r_.str(v.path), "ToEnvoyWebSocketOpen.path")
           && headers(v.headers, "ToEnvoyWebSocketOpen.headers");
  }
  bool get(ToEnvoyWebSocketMessage& v) {
    return check(r_.data(v.data) && r_.boolean(v.binary), "ToEnvoyWebSocketMessage");
  }
  bool get(ToEnvoyWebSocketClose& v) {
    return opt_u16(v.code, "ToEnvoyWebSocketClose.code")
           && opt_str(v.reason, "ToEnvoyWebSocketClose.reason");
  }
  bool get(ToRivetResponseStart& v) {
    return check(r_.u16(v.status), "ToRivetResponseStart.status")
           && headers(v.headers, "ToRivetResponseStart.headers")
           && opt_data(v.body, "ToRivetResponseStart.body")
           && check(r_.boolean(v.stream), "ToRivetResponseStart.stream");
  }
  bool get(ToRivetResponseChunk& v) {
    return check(r_.data(v.body) && r_.boolean(v.finish), "ToRivetResponseChunk");
  }
  bool get(ToRivetResponseAbort& v) { return get(v.reason); }
  bool get(ToRivetRequestBodyWindowUpdate& v) {
    return check(r_.u64(v.consumed_bytes), "ToRivetRequestBodyWindowUpdate");
  }
  bool get(ToRivetRequestBodyCancel&) { return true; }
  bool get(ToRivetWebSocketOpen& v) {
    return check(r_.boolean(v.can_hibernate), "ToRivetWebSocketOpen");
  }
  bool get(ToRivetWebSocketMessage& v) {
    return check(r_.data(v.data) && r_.boolean(v.binary), "ToRivetWebSocketMessage");
  }
  bool get(ToRivetWebSocketMessageAck& v) {
    return check(r_.u16(v.index), "ToRivetWebSocketMessageAck");
  }
  bool get(ToRivetWebSocketClose& v) {
    return opt_u16(v.code, "ToRivetWebSocketClose.code")
           && opt_str(v.reason, "ToRivetWebSocketClose.reason")
           && check(r_.boolean(v.hibernate), "ToRivetWebSocketClose.hibernate");
  }
  bool get(ToEnvoyTunnelMessage& v) {
    return get(v.message_id) && variant(v.message_kind, "ToEnvoyTunnelMessageKind");
  }
  bool get(ToRivetTunnelMessage& v) {
    return get(v.message_id) && variant(v.message_kind, "ToRivetTunnelMessageKind");
  }

  // ---- ToRivet --------------------------------------------------------------------------------

  bool get(ToRivetMetadata& v) {
    constexpr const char* kNames = "ToRivetMetadata.prepopulateActorNames";
    return opt(v.prepopulate_actor_names, kNames,
               [this](std::vector<std::pair<std::string, ActorName>>& names) {
                 return list(names, 2, kNames,
                             [this](std::pair<std::string, ActorName>& entry) {
                               return check(r_.str(entry.first), kNames) && get(entry.second);
                             })
                        && unique_keys(names, kNames);
               })
           && opt_str(v.metadata, "ToRivetMetadata.metadata");
  }
  bool get(ToRivetEvents& v) { return list(v.events, 15, "ToRivetEvents"); }
  bool get(ToRivetAckCommands& v) {
    return list(v.last_command_checkpoints, 13, "ToRivetAckCommands.lastCommandCheckpoints");
  }
  bool get(ToRivetStopping&) { return true; }
  bool get(ToRivetPong& v) { return check(r_.i64(v.ts), "ToRivetPong"); }
  bool get(ToRivetKvRequest& v) {
    return check(r_.str(v.actor_id) && r_.u32(v.request_id), "ToRivetKvRequest")
           && variant(v.data, "KvRequestData");
  }
  template <class Request>
  bool request(Request& v, const char* type) {
    return check(r_.u32(v.request_id), type) && get(v.data);
  }
  bool get(ToRivetSqliteGetPagesRequest& v) { return request(v, "ToRivetSqliteGetPagesRequest"); }
  bool get(ToRivetSqliteCommitRequest& v) { return request(v, "ToRivetSqliteCommitRequest"); }
  bool get(ToRivetSqliteCommitStageBeginRequest& v) {
    return request(v, "ToRivetSqliteCommitStageBeginRequest");
  }
  bool get(ToRivetSqliteCommitStageSegmentRequest& v) {
    return request(v, "ToRivetSqliteCommitStageSegmentRequest");
  }
  bool get(ToRivetSqliteCommitFinalizeRequest& v) {
    return request(v, "ToRivetSqliteCommitFinalizeRequest");
  }
  bool get(ToRivetSqliteExecRequest& v) { return request(v, "ToRivetSqliteExecRequest"); }
  bool get(ToRivetSqliteExecuteRequest& v) { return request(v, "ToRivetSqliteExecuteRequest"); }
  bool get(ToRivetSqliteExecuteBatchRequest& v) {
    return request(v, "ToRivetSqliteExecuteBatchRequest");
  }

  // ---- ToEnvoy --------------------------------------------------------------------------------

  bool get(ToEnvoyInit& v) {
    return check(r_.i64(v.metadata.envoy_lost_threshold) && r_.i64(v.metadata.actor_stop_threshold)
                     && r_.u64(v.metadata.max_response_payload_size),
                 "ToEnvoyInit");
  }
  bool get(ToEnvoyCommands& v) { return list(v.commands, 15, "ToEnvoyCommands"); }
  bool get(ToEnvoyAckEvents& v) {
    return list(v.last_event_checkpoints, 13, "ToEnvoyAckEvents.lastEventCheckpoints");
  }
  bool get(ToEnvoyKvResponse& v) {
    return check(r_.u32(v.request_id), "ToEnvoyKvResponse") && variant(v.data, "KvResponseData");
  }
  bool get(ToEnvoyPing& v) { return check(r_.i64(v.ts), "ToEnvoyPing"); }
  template <class Response>
  bool response(Response& v, const char* type, const char* data_type) {
    return check(r_.u32(v.request_id), type) && variant(v.data, data_type);
  }
  bool get(ToEnvoySqliteGetPagesResponse& v) {
    return response(v, "ToEnvoySqliteGetPagesResponse", "SqliteGetPagesResponse");
  }
  bool get(ToEnvoySqliteCommitResponse& v) {
    return response(v, "ToEnvoySqliteCommitResponse", "SqliteCommitResponse");
  }
  bool get(ToEnvoySqliteCommitStageBeginResponse& v) {
    return response(v, "ToEnvoySqliteCommitStageBeginResponse", "SqliteCommitStageBeginResponse");
  }
  bool get(ToEnvoySqliteCommitStageSegmentResponse& v) {
    return response(v, "ToEnvoySqliteCommitStageSegmentResponse",
                    "SqliteCommitStageSegmentResponse");
  }
  bool get(ToEnvoySqliteCommitFinalizeResponse& v) {
    return response(v, "ToEnvoySqliteCommitFinalizeResponse", "SqliteCommitFinalizeResponse");
  }
  bool get(ToEnvoySqliteExecResponse& v) {
    return response(v, "ToEnvoySqliteExecResponse", "SqliteExecResponse");
  }
  bool get(ToEnvoySqliteExecuteResponse& v) {
    return response(v, "ToEnvoySqliteExecuteResponse", "SqliteExecuteResponse");
  }
  bool get(ToEnvoySqliteExecuteBatchResponse& v) {
    return response(v, "ToEnvoySqliteExecuteBatchResponse", "SqliteExecuteBatchResponse");
  }

 private:
  bare::Reader r_;
  std::size_t size_;
  std::string error_;
};

template <class Top>
Result<Top> decode_top(std::string_view payload, const char* name) {
  Decoder d(payload);
  Top message;
  if (!d.variant(message, name) || !d.finish()) {
    return fail(envoy_decode_error(std::string(name) + ": " + d.error()));
  }
  return message;
}

}  // namespace

Result<ToEnvoy> decode_to_envoy(std::string_view payload) {
  return decode_top<ToEnvoy>(payload, "ToEnvoy");
}

Result<ToRivet> decode_to_rivet(std::string_view payload) {
  return decode_top<ToRivet>(payload, "ToRivet");
}

Result<ToEnvoy> decode_versioned_to_envoy(std::string_view body) {
  if (body.size() < 2) {
    return fail(envoy_decode_error("versioned ToEnvoy: missing version prefix"));
  }
  const auto version = static_cast<std::uint16_t>(static_cast<std::uint8_t>(body[0])
                                                  | (static_cast<std::uint8_t>(body[1]) << 8));
  if (version != kProtocolVersion) {
    return fail(envoy_decode_error("versioned ToEnvoy: unsupported protocol version "
                                   + std::to_string(version)));
  }
  return decode_to_envoy(body.substr(2));
}

}  // namespace rivetkit::protocol::envoy
