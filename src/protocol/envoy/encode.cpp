// Envoy protocol v8 encoder (envoy-protocol.md §3.1). One overload of `put` per schema type, in
// wire order. `str`/`data` fields are std::string, so they are written with explicit w.str() /
// w.data() calls, never through an overload.

#include "protocol/bare/bare.hpp"
#include "protocol/envoy/codec.hpp"

#include <bit>
#include <cstring>
#include <variant>

namespace rivetkit::protocol::envoy {

namespace {

using bare::Writer;

// Member functions of a class see every overload regardless of declaration order, which keeps the
// variant helpers below simple.
class Encoder {
 public:
  explicit Encoder(std::string& out) : w_(out) {}

  // ---- helpers --------------------------------------------------------------------------------

  template <class Variant>
  void variant(const Variant& v) {
    w_.u8(static_cast<std::uint8_t>(v.index()));
    std::visit([this](const auto& alt) { this->put(alt); }, v);
  }
  template <class Enum>
  void enumeration(Enum e) {
    w_.u8(static_cast<std::uint8_t>(e));
  }
  void data_list(const std::vector<std::string>& items) {
    w_.uint(items.size());
    for (const auto& item : items) {
      w_.data(item);
    }
  }
  void str_list(const std::vector<std::string>& items) {
    w_.uint(items.size());
    for (const auto& item : items) {
      w_.str(item);
    }
  }
  void u32_list(const std::vector<std::uint32_t>& items) {
    w_.uint(items.size());
    for (auto item : items) {
      w_.u32(item);
    }
  }
  template <class T>
  void list(const std::vector<T>& items) {
    w_.uint(items.size());
    for (const auto& item : items) {
      put(item);
    }
  }
  void opt_u64(const std::optional<std::uint64_t>& v) {
    w_.optional_tag(v.has_value());
    if (v) {
      w_.u64(*v);
    }
  }
  void opt_i64(const std::optional<std::int64_t>& v) {
    w_.optional_tag(v.has_value());
    if (v) {
      w_.i64(*v);
    }
  }
  void opt_u32(const std::optional<std::uint32_t>& v) {
    w_.optional_tag(v.has_value());
    if (v) {
      w_.u32(*v);
    }
  }
  void opt_u16(const std::optional<std::uint16_t>& v) {
    w_.optional_tag(v.has_value());
    if (v) {
      w_.u16(*v);
    }
  }
  void opt_bool(const std::optional<bool>& v) {
    w_.optional_tag(v.has_value());
    if (v) {
      w_.boolean(*v);
    }
  }
  void opt_str(const std::optional<std::string>& v) {
    w_.optional_tag(v.has_value());
    if (v) {
      w_.str(*v);
    }
  }
  void opt_data(const std::optional<std::string>& v) {
    w_.optional_tag(v.has_value());
    if (v) {
      w_.data(*v);
    }
  }
  void headers(const Headers& h) {
    w_.uint(h.size());
    for (const auto& [k, v] : h) {
      w_.str(k);
      w_.str(v);
    }
  }
  void opt_params(const std::optional<std::vector<SqliteBindParam>>& v) {
    w_.optional_tag(v.has_value());
    if (v) {
      list(*v);
    }
  }
  void fixed4(const std::array<std::uint8_t, 4>& id) { w_.fixed(id); }

  // ---- KV -------------------------------------------------------------------------------------

  void put(const KvMetadata& v) {
    w_.data(v.version);
    w_.i64(v.update_ts);
  }
  void put(const KvListAllQuery&) {}
  void put(const KvListRangeQuery& v) {
    w_.data(v.start);
    w_.data(v.end);
    w_.boolean(v.exclusive);
  }
  void put(const KvListPrefixQuery& v) { w_.data(v.key); }
  void put(const KvGetRequest& v) { data_list(v.keys); }
  void put(const KvListRequest& v) {
    variant(v.query);
    opt_bool(v.reverse);
    opt_u64(v.limit);
  }
  void put(const KvPutRequest& v) {
    data_list(v.keys);
    data_list(v.values);
  }
  void put(const KvDeleteRequest& v) { data_list(v.keys); }
  void put(const KvDeleteRangeRequest& v) {
    w_.data(v.start);
    w_.data(v.end);
  }
  void put(const KvDropRequest&) {}
  void put(const KvErrorResponse& v) { w_.str(v.message); }
  void put(const KvGetResponse& v) {
    data_list(v.keys);
    data_list(v.values);
    list(v.metadata);
  }
  void put(const KvListResponse& v) {
    data_list(v.keys);
    data_list(v.values);
    list(v.metadata);
  }
  void put(const KvPutResponse&) {}
  void put(const KvDeleteResponse&) {}
  void put(const KvDropResponse&) {}

  // ---- SQLite ---------------------------------------------------------------------------------

  void put(const SqliteDirtyPage& v) {
    w_.u32(v.pgno);
    w_.data(v.bytes);
  }
  void put(const SqliteFetchedPage& v) {
    w_.u32(v.pgno);
    opt_data(v.bytes);
  }
  void put(const SqliteErrorResponse& v) {
    w_.str(v.group);
    w_.str(v.code);
    w_.str(v.message);
  }
  void put(const SqliteGetPagesRequest& v) {
    w_.str(v.actor_id);
    u32_list(v.pgnos);
    opt_u64(v.expected_generation);
    opt_u64(v.expected_head_txid);
  }
  void put(const SqliteGetPagesOk& v) {
    list(v.pages);
    opt_u64(v.head_txid);
  }
  void put(const SqliteCommitRequest& v) {
    w_.str(v.actor_id);
    list(v.dirty_pages);
    w_.u32(v.db_size_pages);
    w_.i64(v.now_ms);
    opt_u64(v.expected_generation);
    opt_u64(v.expected_head_txid);
  }
  void put(const SqliteCommitOk& v) { opt_u64(v.head_txid); }
  void put(const SqliteCommitStageBeginRequest& v) {
    w_.str(v.actor_id);
    opt_u64(v.expected_generation);
    opt_u64(v.expected_head_txid);
  }
  void put(const SqliteCommitStageBeginOk& v) { w_.u64(v.txid); }
  void put(const SqliteCommitStageSegmentRequest& v) {
    w_.str(v.actor_id);
    opt_u64(v.expected_generation);
    w_.u64(v.txid);
    w_.u32(v.first_pgno);
    list(v.dirty_pages);
  }
  void put(const SqliteCommitStageSegmentOk& v) { w_.u64(v.staged_bytes); }
  void put(const SqliteCommitFinalizeRequest& v) {
    w_.str(v.actor_id);
    opt_u64(v.expected_generation);
    w_.u64(v.txid);
    w_.u32(v.new_db_size_pages);
    w_.i64(v.now_ms);
    u32_list(v.segment_first_pgnos);
  }
  void put(const SqliteCommitFinalizeOk& v) { opt_u64(v.head_txid); }
  void put(const SqliteValueNull&) {}
  void put(const SqliteValueInteger& v) { w_.i64(v.value); }
  void put(const SqliteValueFloat& v) { w_.fixed(v.value); }
  void put(const SqliteValueText& v) { w_.str(v.value); }
  void put(const SqliteValueBlob& v) { w_.data(v.value); }
  void put(const SqliteValue& v) { variant(v); }
  void put(const std::vector<SqliteColumnValue>& row) { list(row); }
  void put(const SqliteQueryResult& v) {
    str_list(v.columns);
    list(v.rows);
  }
  void put(const SqliteExecuteResult& v) {
    str_list(v.columns);
    list(v.rows);
    w_.i64(v.changes);
    opt_i64(v.last_insert_row_id);
  }
  void put(const SqliteExecRequest& v) {
    w_.str(v.namespace_id);
    w_.str(v.actor_id);
    w_.u64(v.generation);
    w_.str(v.sql);
  }
  void put(const SqliteExecuteRequest& v) {
    w_.str(v.namespace_id);
    w_.str(v.actor_id);
    w_.u64(v.generation);
    w_.str(v.sql);
    opt_params(v.params);
  }
  void put(const SqliteBatchStatement& v) {
    w_.str(v.sql);
    opt_params(v.params);
  }
  void put(const SqliteExecuteBatchRequest& v) {
    w_.str(v.namespace_id);
    w_.str(v.actor_id);
    w_.u64(v.generation);
    list(v.statements);
  }
  void put(const SqliteExecOk& v) { put(v.result); }
  void put(const SqliteExecuteOk& v) { put(v.result); }
  void put(const SqliteExecuteBatchOk& v) { list(v.results); }

  // ---- actor lifecycle ------------------------------------------------------------------------

  void put(const ActorName& v) { w_.str(v.metadata); }
  void put(const ActorConfig& v) {
    w_.str(v.name);
    opt_str(v.key);
    w_.i64(v.create_ts);
    opt_data(v.input);
  }
  void put(const ActorCheckpoint& v) {
    w_.str(v.actor_id);
    w_.u32(v.generation);
    w_.i64(v.index);
  }
  void put(const ActorIntentSleep&) {}
  void put(const ActorIntentStop&) {}
  void put(const ActorStateRunning&) {}
  void put(const ActorStateStopped& v) {
    enumeration(v.code);
    opt_str(v.message);
  }
  void put(const EventActorIntent& v) { variant(v.intent); }
  void put(const EventActorStateUpdate& v) { variant(v.state); }
  void put(const EventActorSetAlarm& v) { opt_i64(v.alarm_ts); }
  void put(const EventWrapper& v) {
    put(v.checkpoint);
    variant(v.inner);
  }
  void put(const PreloadedKvEntry& v) {
    w_.data(v.key);
    w_.data(v.value);
    put(v.metadata);
  }
  void put(const PreloadedKv& v) {
    list(v.entries);
    data_list(v.requested_get_keys);
    data_list(v.requested_prefixes);
  }
  void put(const HibernatingRequest& v) {
    fixed4(v.gateway_id);
    fixed4(v.request_id);
  }
  void put(const CommandStartActor& v) {
    put(v.config);
    list(v.hibernating_requests);
    w_.optional_tag(v.preloaded_kv.has_value());
    if (v.preloaded_kv) {
      put(*v.preloaded_kv);
    }
  }
  void put(const CommandStopActor& v) { enumeration(v.reason); }
  void put(const CommandWrapper& v) {
    put(v.checkpoint);
    variant(v.inner);
  }

  // ---- tunnel ---------------------------------------------------------------------------------

  void put(const MessageId& v) {
    fixed4(v.gateway_id);
    fixed4(v.request_id);
    w_.u16(v.message_index);
  }
  void put(const HttpStreamAbortReason& v) {
    enumeration(v.kind);
    opt_str(v.detail);
  }
  void put(const ToEnvoyRequestStart& v) {
    w_.str(v.actor_id);
    opt_u32(v.actor_generation);
    w_.str(v.method);
    w_.str(v.path);
    headers(v.headers);
    opt_data(v.body);
    w_.boolean(v.stream);
    w_.boolean(v.response_stream);
  }
  void put(const ToEnvoyRequestChunk& v) {
    w_.data(v.body);
    w_.boolean(v.finish);
  }
  void put(const ToEnvoyRequestAbort& v) {
    opt_str(v.actor_id);
    opt_u32(v.actor_generation);
    put(v.reason);
  }
  void put(const ToEnvoyRequestBodyCancel&) {}
  void put(const ToEnvoyResponseBodyWindowUpdate& v) { w_.u64(v.consumed_bytes); }
  void put(const ToEnvoyWebSocketOpen& v) {
    w_.str(v.actor_id);
    opt_u32(v.actor_generation);
    w_.str(v.path);
    headers(v.headers);
  }
  void put(const ToEnvoyWebSocketMessage& v) {
    w_.data(v.data);
    w_.boolean(v.binary);
  }
  void put(const ToEnvoyWebSocketClose& v) {
    opt_u16(v.code);
    opt_str(v.reason);
  }
  void put(const ToRivetResponseStart& v) {
    w_.u16(v.status);
    headers(v.headers);
    opt_data(v.body);
    w_.boolean(v.stream);
  }
  void put(const ToRivetResponseChunk& v) {
    w_.data(v.body);
    w_.boolean(v.finish);
  }
  void put(const ToRivetResponseAbort& v) { put(v.reason); }
  void put(const ToRivetRequestBodyWindowUpdate& v) { w_.u64(v.consumed_bytes); }
  void put(const ToRivetRequestBodyCancel&) {}
  void put(const ToRivetWebSocketOpen& v) { w_.boolean(v.can_hibernate); }
  void put(const ToRivetWebSocketMessage& v) {
    w_.data(v.data);
    w_.boolean(v.binary);
  }
  void put(const ToRivetWebSocketMessageAck& v) { w_.u16(v.index); }
  void put(const ToRivetWebSocketClose& v) {
    opt_u16(v.code);
    opt_str(v.reason);
    w_.boolean(v.hibernate);
  }
  void put(const ToEnvoyTunnelMessage& v) {
    put(v.message_id);
    variant(v.message_kind);
  }
  void put(const ToRivetTunnelMessage& v) {
    put(v.message_id);
    variant(v.message_kind);
  }

  // ---- ToRivet --------------------------------------------------------------------------------

  void put(const ToRivetMetadata& v) {
    w_.optional_tag(v.prepopulate_actor_names.has_value());
    if (v.prepopulate_actor_names) {
      w_.uint(v.prepopulate_actor_names->size());
      for (const auto& [name, actor_name] : *v.prepopulate_actor_names) {
        w_.str(name);
        put(actor_name);
      }
    }
    opt_str(v.metadata);
  }
  void put(const ToRivetEvents& v) { list(v.events); }
  void put(const ToRivetAckCommands& v) { list(v.last_command_checkpoints); }
  void put(const ToRivetStopping&) {}
  void put(const ToRivetPong& v) { w_.i64(v.ts); }
  void put(const ToRivetKvRequest& v) {
    w_.str(v.actor_id);
    w_.u32(v.request_id);
    variant(v.data);
  }
  template <class Request>
  void request(const Request& v) {
    w_.u32(v.request_id);
    put(v.data);
  }
  void put(const ToRivetSqliteGetPagesRequest& v) { request(v); }
  void put(const ToRivetSqliteCommitRequest& v) { request(v); }
  void put(const ToRivetSqliteCommitStageBeginRequest& v) { request(v); }
  void put(const ToRivetSqliteCommitStageSegmentRequest& v) { request(v); }
  void put(const ToRivetSqliteCommitFinalizeRequest& v) { request(v); }
  void put(const ToRivetSqliteExecRequest& v) { request(v); }
  void put(const ToRivetSqliteExecuteRequest& v) { request(v); }
  void put(const ToRivetSqliteExecuteBatchRequest& v) { request(v); }

  // ---- ToEnvoy --------------------------------------------------------------------------------

  void put(const ToEnvoyInit& v) {
    w_.i64(v.metadata.envoy_lost_threshold);
    w_.i64(v.metadata.actor_stop_threshold);
    w_.u64(v.metadata.max_response_payload_size);
  }
  void put(const ToEnvoyCommands& v) { list(v.commands); }
  void put(const ToEnvoyAckEvents& v) { list(v.last_event_checkpoints); }
  void put(const ToEnvoyKvResponse& v) {
    w_.u32(v.request_id);
    variant(v.data);
  }
  void put(const ToEnvoyPing& v) { w_.i64(v.ts); }
  template <class Response>
  void response(const Response& v) {
    w_.u32(v.request_id);
    variant(v.data);
  }
  void put(const ToEnvoySqliteGetPagesResponse& v) { response(v); }
  void put(const ToEnvoySqliteCommitResponse& v) { response(v); }
  void put(const ToEnvoySqliteCommitStageBeginResponse& v) { response(v); }
  void put(const ToEnvoySqliteCommitStageSegmentResponse& v) { response(v); }
  void put(const ToEnvoySqliteCommitFinalizeResponse& v) { response(v); }
  void put(const ToEnvoySqliteExecResponse& v) { response(v); }
  void put(const ToEnvoySqliteExecuteResponse& v) { response(v); }
  void put(const ToEnvoySqliteExecuteBatchResponse& v) { response(v); }

 private:
  Writer w_;
};

}  // namespace

void encode_to(const ToRivet& message, std::string& out) {
  Encoder(out).variant(message);
}

void encode_to(const ToEnvoy& message, std::string& out) {
  Encoder(out).variant(message);
}

std::string encode(const ToRivet& message) {
  std::string out;
  encode_to(message, out);
  return out;
}

std::string encode(const ToEnvoy& message) {
  std::string out;
  encode_to(message, out);
  return out;
}

std::string encode_versioned(const ToEnvoy& message) {
  std::string out;
  Writer(out).u16(kProtocolVersion);
  encode_to(message, out);
  return out;
}

SqliteValueFloat sqlite_float(double v) {
  SqliteValueFloat f;
  const auto bits = std::bit_cast<std::uint64_t>(v);
  for (std::size_t i = 0; i < f.value.size(); ++i) {
    f.value[i] = static_cast<std::uint8_t>((bits >> (8 * i)) & 0xFFu);
  }
  return f;
}

double sqlite_float_value(const SqliteValueFloat& v) {
  std::uint64_t bits = 0;
  for (std::size_t i = 0; i < v.value.size(); ++i) {
    bits |= std::uint64_t{v.value[i]} << (8 * i);
  }
  return std::bit_cast<double>(bits);
}

}  // namespace rivetkit::protocol::envoy
