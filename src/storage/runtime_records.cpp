#include "storage/runtime_records.hpp"

#include "protocol/bare/bare.hpp"

namespace rivetkit::storage::runtime_records {

namespace bare = protocol::bare;

namespace {

// 1: fixed-width fields, no index table (written by no release; still read).
constexpr std::uint8_t kHeadVersion = 2;
// 1: the tunnel id as two ids (gateway, request); 2: one opaque tunnel id.
constexpr std::uint8_t kConnVersion = 2;
constexpr std::uint8_t kScheduleVersion = 1;

void put_be32(std::string& out, std::uint32_t v) {
  for (int i = 3; i >= 0; --i) {
    out += static_cast<char>((v >> (8 * i)) & 0xff);
  }
}

std::uint32_t get_be32(std::string_view s) {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    v = (v << 8) | static_cast<unsigned char>(s[i]);
  }
  return v;
}

std::string record_key(std::uint32_t epoch, char kind) {
  std::string k{kPrefix, kRecords};
  put_be32(k, epoch);
  k += kind;
  return k;
}

std::string chunks_prefix(std::uint32_t epoch) {
  std::string k{kPrefix, kChunks};
  put_be32(k, epoch);
  return k;
}

Error corrupt(std::string what) {
  return Error{"storage", "corrupt_record", "Stored actor record is corrupt: " + std::move(what),
               std::nullopt, false};
}

// Every count is bounded by the bytes left (each element takes at least one byte).
bool read_count(bare::Reader& r, std::uint64_t& n) {
  return r.uint(n) && n <= r.remaining();
}

}  // namespace

std::string head_key(std::uint32_t epoch) {
  return record_key(epoch, kHead);
}

std::string input_key(std::uint32_t epoch) {
  return record_key(epoch, kInput);
}

std::string conn_key(std::uint32_t epoch, std::string_view conn_id) {
  std::string k = record_key(epoch, kConn);
  k += conn_id;
  return k;
}

std::string schedule_key(std::uint32_t epoch, std::string_view event_id) {
  std::string k = record_key(epoch, kSchedule);
  k += event_id;
  return k;
}

std::string chunk_key(std::uint32_t epoch, std::uint8_t slot, std::uint32_t chunk) {
  std::string k = chunks_prefix(epoch);
  k += static_cast<char>(slot);
  put_be32(k, chunk);
  return k;
}

std::pair<std::string, std::string> records_before(std::uint32_t epoch) {
  std::string start{kPrefix, kRecords};
  std::string end = start;
  put_be32(end, epoch);
  return {std::move(start), std::move(end)};
}

std::pair<std::string, std::string> chunks_before(std::uint32_t epoch) {
  return {std::string{kPrefix, kChunks}, chunks_prefix(epoch)};
}

std::pair<std::string, std::string> slot_chunks(std::uint32_t epoch,
                                                std::uint8_t slot,
                                                std::uint32_t from) {
  std::string end = chunks_prefix(epoch);
  end += static_cast<char>(slot + 1);  // slots are 0 and 1: never 0xff
  return {chunk_key(epoch, slot, from), std::move(end)};
}

std::pair<std::string, std::string> all_records() {
  return {std::string{kPrefix, kRecords}, std::string{kPrefix, static_cast<char>(kRecords + 1)}};
}

std::optional<RecordKey> parse_record_key(std::string_view key) {
  if (key.size() < 7 || key[0] != kPrefix || key[1] != kRecords) {
    return std::nullopt;
  }
  RecordKey parsed{get_be32(key.substr(2, 4)), key[6], std::string(key.substr(7))};
  switch (parsed.kind) {
    case kHead:
    case kInput:
      if (!parsed.id.empty()) {
        return std::nullopt;
      }
      return parsed;
    case kConn:
    case kSchedule:
      return parsed;  // any id, the empty one too (the kind tells it from the head)
    default:
      return std::nullopt;
  }
}

// Version 2, compact (a sleeping actor's head is most of its disk): u8 version, u8 flags (bit 0
// sealed, bit 1 created, bits 2-3 the state form, bit 4 an index table follows), uint owner, the
// form's fields (inline: data; chunked: u8 slot, uint chunks, uint size), then the table when
// flagged (uint count, then per connection: data id, u16 server, u16 client).
namespace {
constexpr std::uint8_t kSealedBit = 1;
constexpr std::uint8_t kCreatedBit = 2;
constexpr int kFormShift = 2;
constexpr std::uint8_t kFormMask = 3 << kFormShift;
constexpr std::uint8_t kTableBit = 16;
}  // namespace

std::string encode_head(const Head& h) {
  std::string out;
  bare::Writer w(out);
  w.u8(kHeadVersion);
  unsigned flags = static_cast<unsigned>(h.form) << kFormShift;
  flags |= h.sealed ? kSealedBit : 0u;
  flags |= h.has_initialized ? kCreatedBit : 0u;
  flags |= h.indexes.empty() ? 0u : kTableBit;
  w.u8(static_cast<std::uint8_t>(flags));
  w.uint(h.owner);
  switch (h.form) {
    case StateForm::kNone:
      break;
    case StateForm::kInline:
      w.data(h.inline_state);
      break;
    case StateForm::kChunked:
      w.u8(h.slot);
      w.uint(h.chunks);
      w.uint(h.size);
      break;
  }
  if (!h.indexes.empty()) {
    w.uint(h.indexes.size());
    for (const auto& [id, idx] : h.indexes) {
      w.data(id);
      w.u16(idx.server);
      w.u16(idx.client);
    }
  }
  return out;
}

Result<Head> decode_head(std::string_view bytes) {
  bare::Reader r(bytes);
  Head h;
  std::uint8_t version = 0;
  if (!r.u8(version) || version < 1 || version > kHeadVersion) {
    return fail(corrupt("unknown head version"));
  }
  std::uint8_t form = 0;
  bool table = false;
  if (version == 1) {
    // Fixed-width fields and no index table (never in a release).
    r.u32(h.owner);
    r.boolean(h.sealed);
    r.boolean(h.has_initialized);
    r.u8(form);
  } else {
    std::uint8_t flags = 0;
    std::uint64_t owner = 0;
    r.u8(flags);
    r.uint(owner);
    if ((flags & ~(kSealedBit | kCreatedBit | kFormMask | kTableBit)) != 0 || owner > 0xffffffffu) {
      return fail(corrupt("head flags or owner"));
    }
    h.owner = static_cast<std::uint32_t>(owner);
    h.sealed = (flags & kSealedBit) != 0;
    h.has_initialized = (flags & kCreatedBit) != 0;
    form = static_cast<std::uint8_t>((flags & kFormMask) >> kFormShift);
    table = (flags & kTableBit) != 0;
  }
  switch (form) {
    case 0:
      h.form = StateForm::kNone;
      break;
    case 1:
      h.form = StateForm::kInline;
      r.data(h.inline_state);
      break;
    case 2: {
      h.form = StateForm::kChunked;
      r.u8(h.slot);
      if (version == 1) {
        r.u32(h.chunks);
        r.u64(h.size);
      } else {
        std::uint64_t chunks = 0;
        r.uint(chunks);
        r.uint(h.size);
        if (chunks > 0xffffffffu) {
          return fail(corrupt("state chunk count"));
        }
        h.chunks = static_cast<std::uint32_t>(chunks);
      }
      if (h.slot > 1) {
        return fail(corrupt("state slot"));
      }
      break;
    }
    default:
      return fail(corrupt("state form"));
  }
  if (table) {
    std::uint64_t count = 0;
    r.uint(count);
    for (std::uint64_t i = 0; i < count && !r.failed(); ++i) {
      std::string id;
      MessageIndexes idx;
      r.data(id);
      r.u16(idx.server);
      r.u16(idx.client);
      if (!r.failed() && !h.indexes.emplace(std::move(id), idx).second) {
        return fail(corrupt("a connection twice in the head's index table"));
      }
    }
  }
  if (r.failed() || !r.at_end()) {
    return fail(corrupt("truncated or trailing bytes in the head"));
  }
  return h;
}

// Names, ids and paths are read as bytes, not checked as UTF-8 (a BARE string and BARE data are
// the same bytes): a connection keeps the bytes its client sent, and a stored record never fails
// to load over an encoding the runtime did not check when it wrote it.
void write_conn_fields(bare::Writer& w, const PersistedConn& c, ConnLayout layout) {
  w.str(c.conn_id);
  w.str(c.kind);
  w.str(c.encoding);
  w.data(c.params);
  w.data(c.state);
  w.uint(c.subscriptions.size());
  for (const auto& s : c.subscriptions) {
    w.str(s);
  }
  w.str(c.request_path);
  w.data(c.request_headers);
  if (layout == ConnLayout::kTwoIds) {
    const std::string_view id = c.tunnel_id;
    w.data(id.substr(0, std::min<std::size_t>(4, id.size())));
    w.data(id.size() > 4 ? id.substr(4) : std::string_view());
  } else {
    w.data(c.tunnel_id);
  }
  w.u16(c.server_message_index);
  w.u16(c.client_message_index);
}

bool read_conn_fields(bare::Reader& r, PersistedConn& c, ConnLayout layout) {
  r.data(c.conn_id);
  r.data(c.kind);
  r.data(c.encoding);
  r.data(c.params);
  r.data(c.state);
  std::uint64_t subs = 0;
  if (!read_count(r, subs)) {
    return false;
  }
  for (std::uint64_t j = 0; j < subs && !r.failed(); ++j) {
    std::string s;
    r.data(s);
    c.subscriptions.push_back(std::move(s));
  }
  r.data(c.request_path);
  r.data(c.request_headers);
  r.data(c.tunnel_id);
  if (layout == ConnLayout::kTwoIds) {
    std::string request_id;
    r.data(request_id);
    c.tunnel_id += request_id;
  }
  r.u16(c.server_message_index);
  r.u16(c.client_message_index);
  return !r.failed();
}

void write_schedule_fields(bare::Writer& w, const PersistedSchedule& s) {
  w.str(s.event_id);
  w.i64(s.trigger_at);
  w.str(s.action);
  w.optional_tag(s.args.has_value());
  if (s.args) {
    w.data(*s.args);
  }
  w.i64(s.created_at);
  w.u32(s.attempts);
}

bool read_schedule_fields(bare::Reader& r, PersistedSchedule& s) {
  r.data(s.event_id);
  r.i64(s.trigger_at);
  r.data(s.action);
  bool has_args = false;
  if (r.optional_tag(has_args) && has_args) {
    std::string args;
    r.data(args);
    s.args = std::move(args);
  }
  r.i64(s.created_at);
  r.u32(s.attempts);
  return !r.failed();
}

std::string encode_conn(const PersistedConn& c) {
  std::string out;
  bare::Writer w(out);
  w.u8(kConnVersion);
  write_conn_fields(w, c, ConnLayout::kTunnelId);
  return out;
}

Result<PersistedConn> decode_conn(std::string_view bytes) {
  bare::Reader r(bytes);
  PersistedConn c;
  std::uint8_t version = 0;
  if (!r.u8(version) || version < 1 || version > kConnVersion) {
    return fail(corrupt("unknown connection version"));
  }
  const auto layout = version == 1 ? ConnLayout::kTwoIds : ConnLayout::kTunnelId;
  if (!read_conn_fields(r, c, layout) || !r.at_end()) {
    return fail(corrupt("truncated or trailing bytes in a connection"));
  }
  return c;
}

std::string encode_schedule(const PersistedSchedule& s) {
  std::string out;
  bare::Writer w(out);
  w.u8(kScheduleVersion);
  write_schedule_fields(w, s);
  return out;
}

Result<PersistedSchedule> decode_schedule(std::string_view bytes) {
  bare::Reader r(bytes);
  PersistedSchedule s;
  std::uint8_t version = 0;
  if (!r.u8(version) || version != kScheduleVersion) {
    return fail(corrupt("unknown schedule version"));
  }
  if (!read_schedule_fields(r, s) || !r.at_end()) {
    return fail(corrupt("truncated or trailing bytes in a schedule"));
  }
  return s;
}

}  // namespace rivetkit::storage::runtime_records
