// Encoding of the inspector messages for versions 1 to 6 (inspector_messages.hpp). The variants
// list the messages in the union order of version 6; the tables below give each one's tag in an
// older version (-1: that version has no such message).

#include "protocol/bare/bare.hpp"
#include "protocol/inspector/inspector_messages.hpp"

#include <array>

namespace rivetkit::protocol::inspector {

namespace {

constexpr std::size_t kToClientKinds = std::variant_size_v<ToClient>;

// ToClient tag per version, by the message's index in ToClient (version 6's order).
constexpr std::array<std::array<int, kToClientKinds>, kMaxVersion + 1> kClientTags = {{
    {},                                                                        // (no version 0)
    {0, 1, 3, 5, -1, 7, -1, -1, 4, -1, -1, -1, -1, -1, -1, -1, 8, 9, -1, -1},  // v1
    {0, 1, 2, 3, 4, 5, 6, -1, 7, 8, 9, 10, -1, -1, -1, -1, 11, 12, -1, -1},    // v2
    {0, 1, 2, 3, 4, 5, 6, -1, 7, 8, 9, 10, -1, -1, -1, -1, 11, 12, 13, 14},    // v3
    {0, 1, 2, 3, 4, 5, 6, -1, 7, 8, 9, 10, 11, -1, -1, -1, 12, 13, 14, 15},    // v4
    {0, 1, 2, 3, 4, 5, 6, -1, 7, 8, 9, 10, 11, -1, -1, -1, 12, 13, 14, 15},    // v5
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19},    // v6
}};

// Version N's ToServer tags, as indexes in ToServer (version 6's order); -2: a v1 events request.
constexpr int kEvents = -2;
const std::array<std::vector<int>, kMaxVersion + 1> kServerKinds = {{
    {},
    {0, 1, 2, 3, kEvents, kEvents, 4},
    {0, 1, 2, 3, 4, 5, 6, 7},
    {0, 1, 2, 3, 4, 5, 6, 7, 9, 10},
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10},
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10},
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13},
}};

// What a version that cannot carry a message is told instead (by the message's index).
std::string_view dropped(std::size_t index) {
  switch (index) {
    case 4:
    case 10:
      return "inspector.queue_dropped";
    case 6:
    case 11:
    case 12:
      return "inspector.workflow_history_dropped";
    case 7:
    case 13:
    case 14:
    case 15:
      return "inspector.schedules_dropped";
    case 9:
      return "inspector.trace_dropped";
    default:
      return "inspector.database_dropped";
  }
}

void write_opt_str(bare::Writer& w, const std::optional<std::string>& v) {
  w.optional_tag(v.has_value());
  if (v) {
    w.str(*v);
  }
}
void write_opt_data(bare::Writer& w, const std::optional<std::string>& v) {
  w.optional_tag(v.has_value());
  if (v) {
    w.data(*v);
  }
}
void write_opt_uint(bare::Writer& w, const std::optional<std::uint64_t>& v) {
  w.optional_tag(v.has_value());
  if (v) {
    w.uint(*v);
  }
}
void write_connections(bare::Writer& w, const std::vector<Connection>& list) {
  w.uint(list.size());
  for (const auto& c : list) {
    w.str(c.id);
    w.data(c.details);
  }
}
void write_strings(bare::Writer& w, const std::vector<std::string>& list) {
  w.uint(list.size());
  for (const auto& s : list) {
    w.str(s);
  }
}
void write_schedules(bare::Writer& w, const std::vector<Schedule>& list) {
  w.uint(list.size());
  for (const auto& s : list) {
    w.str(s.id);
    write_opt_str(w, s.name);
    w.str(s.kind);
    w.str(s.action);
    w.data(s.args);
    w.uint(s.next_run_at);
    write_opt_uint(w, s.last_run_at);
    write_opt_str(w, s.expression);
    write_opt_str(w, s.timezone);
    write_opt_uint(w, s.interval_ms);
    write_opt_uint(w, s.max_history);
  }
}

struct BodyWriter {
  bare::Writer& w;
  std::uint16_t version;

  void operator()(const StateResponse& m) const {
    w.uint(m.rid);
    write_opt_data(w, m.state);
    w.boolean(m.is_state_enabled);
  }
  void operator()(const ConnectionsResponse& m) const {
    w.uint(m.rid);
    write_connections(w, m.connections);
  }
  void operator()(const ActionResponse& m) const {
    w.uint(m.rid);
    w.data(m.output);
  }
  void operator()(const ConnectionsUpdated& m) const { write_connections(w, m.connections); }
  void operator()(const QueueUpdated& m) const { w.uint(m.queue_size); }
  void operator()(const StateUpdated& m) const { w.data(m.state); }
  void operator()(const WorkflowHistoryUpdated& m) const { w.data(m.history); }
  void operator()(const SchedulesUpdated& m) const { write_schedules(w, m.schedules); }
  void operator()(const RpcsListResponse& m) const {
    w.uint(m.rid);
    write_strings(w, m.rpcs);
  }
  void operator()(const TraceQueryResponse& m) const {
    w.uint(m.rid);
    w.data(m.payload);
  }
  void operator()(const QueueResponse& m) const {
    w.uint(m.rid);
    w.uint(m.size);
    w.uint(m.max_size);
    w.uint(m.messages.size());
    for (const auto& q : m.messages) {
      w.uint(q.id);
      w.str(q.name);
      w.uint(q.created_at_ms);
    }
    w.boolean(m.truncated);
  }
  void operator()(const WorkflowHistoryResponse& m) const {
    w.uint(m.rid);
    write_opt_data(w, m.history);
    w.boolean(m.is_workflow_enabled);
  }
  void operator()(const WorkflowReplayResponse& m) const {
    w.uint(m.rid);
    write_opt_data(w, m.history);
    w.boolean(m.is_workflow_enabled);
  }
  void operator()(const SchedulesResponse& m) const {
    w.uint(m.rid);
    write_schedules(w, m.schedules);
  }
  void operator()(const ScheduleHistoryResponse& m) const {
    w.uint(m.rid);
    w.str(m.schedule_id);
    w.uint(0);  // no fires kept
  }
  void operator()(const ScheduleDeleteResponse& m) const {
    w.uint(m.rid);
    w.str(m.schedule_id);
    w.boolean(m.deleted);
  }
  void operator()(const ErrorMessage& m) const { w.str(m.message); }
  void operator()(const Init& m) const {
    write_connections(w, m.connections);
    if (version == 1) {
      w.uint(0);  // events: none are recorded
    }
    write_opt_data(w, m.state);
    w.boolean(m.is_state_enabled);
    write_strings(w, m.rpcs);
    w.boolean(m.is_database_enabled);
    if (version >= 2) {
      w.uint(m.queue_size);
      write_opt_data(w, m.workflow_history);
      w.boolean(m.is_workflow_enabled);
    }
    if (version >= 5) {
      w.uint(0);  // tab config: no custom tabs
    }
    if (version >= 6) {
      write_schedules(w, m.schedules);
    }
  }
  void operator()(const DatabaseSchemaResponse& m) const {
    w.uint(m.rid);
    w.data(m.schema);
  }
  void operator()(const DatabaseTableRowsResponse& m) const {
    w.uint(m.rid);
    w.data(m.result);
  }
};

Error decode_error(std::string message) {
  return Error{"inspector", "invalid_message", std::move(message), std::nullopt, true};
}

struct Fields {
  bare::Reader& r;
  bool ok = true;
  std::uint64_t uint() {
    std::uint64_t v = 0;
    ok = r.uint(v) && ok;
    return v;
  }
  std::string str() {
    std::string v;
    ok = r.str(v) && ok;
    return v;
  }
  std::string data() {
    std::string v;
    ok = r.data(v) && ok;
    return v;
  }
  std::optional<std::string> opt_str() {
    bool present = false;
    ok = r.optional_tag(present) && ok;
    if (!ok || !present) {
      return std::nullopt;
    }
    return str();
  }
};

ToServer read_body(Fields& f, int kind) {
  switch (kind) {
    case 0:
      return PatchStateRequest{f.data()};
    case 1:
      return StateRequest{f.uint()};
    case 2:
      return ConnectionsRequest{f.uint()};
    case 3: {
      ActionRequest m;
      m.id = f.uint();
      m.name = f.str();
      m.args = f.data();
      return m;
    }
    case 4:
      return RpcsListRequest{f.uint()};
    case 5: {
      TraceQueryRequest m;
      m.id = f.uint();
      m.start_ms = f.uint();
      m.end_ms = f.uint();
      m.limit = f.uint();
      return m;
    }
    case 6: {
      QueueRequest m;
      m.id = f.uint();
      m.limit = f.uint();
      return m;
    }
    case 7:
      return WorkflowHistoryRequest{f.uint()};
    case 8: {
      WorkflowReplayRequest m;
      m.id = f.uint();
      m.entry_id = f.opt_str();
      return m;
    }
    case 9:
      return DatabaseSchemaRequest{f.uint()};
    case 10: {
      DatabaseTableRowsRequest m;
      m.id = f.uint();
      m.table = f.str();
      m.limit = f.uint();
      m.offset = f.uint();
      return m;
    }
    case 11:
      return SchedulesRequest{f.uint()};
    case 12: {
      ScheduleHistoryRequest m;
      m.id = f.uint();
      m.schedule_id = f.str();
      m.limit = f.uint();
      return m;
    }
    default: {
      ScheduleDeleteRequest m;
      m.id = f.uint();
      m.schedule_id = f.str();
      m.kind = f.str();
      return m;
    }
  }
}

}  // namespace

std::string encode_to_client(const ToClient& message, std::uint16_t version) {
  std::string out;
  bare::Writer w(out);
  const int tag = kClientTags.at(version).at(message.index());
  if (tag < 0) {
    const ToClient error = ErrorMessage{std::string(dropped(message.index()))};
    w.uint(static_cast<std::uint64_t>(kClientTags.at(version).at(error.index())));
    std::visit(BodyWriter{w, version}, error);
    return out;
  }
  w.uint(static_cast<std::uint64_t>(tag));
  std::visit(BodyWriter{w, version}, message);
  return out;
}

std::string encode_to_client_embedded(const ToClient& message, std::uint16_t version) {
  std::string out;
  bare::Writer w(out);
  w.u16(version);
  return out + encode_to_client(message, version);
}

Result<ToServer> decode_to_server(std::string_view bytes, std::uint16_t version) {
  if (version < kMinVersion || version > kMaxVersion) {
    return fail(decode_error("unsupported inspector protocol version " + std::to_string(version)));
  }
  bare::Reader r(bytes);
  std::uint64_t tag = 0;
  if (!r.uint(tag)) {
    return fail(decode_error("empty or truncated inspector message"));
  }
  const auto& kinds = kServerKinds.at(version);
  if (tag >= kinds.size()) {
    return fail(decode_error("unknown inspector request tag " + std::to_string(tag)
                             + " for protocol version " + std::to_string(version)));
  }
  const int kind = kinds[tag];
  if (kind == kEvents) {
    return fail(decode_error("inspector v1 events requests are not supported"));
  }
  Fields fields{r};
  ToServer message = read_body(fields, kind);
  if (!fields.ok || r.failed()) {
    return fail(decode_error("truncated or malformed inspector request"));
  }
  if (!r.at_end()) {
    return fail(decode_error("trailing bytes after the inspector request"));
  }
  return message;
}

Result<ToServer> decode_to_server_embedded(std::string_view bytes) {
  bare::Reader r(bytes);
  std::uint16_t version = 0;
  if (!r.u16(version)) {
    return fail(decode_error("an inspector message without its version"));
  }
  return decode_to_server(bytes.substr(2), version);
}

}  // namespace rivetkit::protocol::inspector
