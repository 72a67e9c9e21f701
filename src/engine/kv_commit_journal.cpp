#include "engine/kv_commit_journal.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <string_view>

namespace rivetkit::engine::journal {

namespace {

constexpr char kFormat = '\x01';

void put_be(std::string& out, std::uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) {
    out += static_cast<char>((v >> (8 * i)) & 0xff);
  }
}

std::uint64_t get_be(std::string_view in, std::size_t pos, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) {
    v = (v << 8) | static_cast<unsigned char>(in[pos + static_cast<std::size_t>(i)]);
  }
  return v;
}

void put_str(std::string& out, std::string_view s) {
  put_be(out, s.size(), 4);
  out += s;
}

std::string chunk_key(std::uint32_t generation, std::uint32_t chunk) {
  std::string k(1, kJournalPrefix);
  put_be(k, generation, 4);
  put_be(k, chunk, 4);
  return k;
}

std::string generation_start(std::uint64_t generation) {
  std::string k(1, kJournalPrefix);
  if (generation > UINT32_MAX) {
    return std::string(1, static_cast<char>(kJournalPrefix + 1));  // past every generation
  }
  put_be(k, generation, 4);
  return k;
}

std::string encode(const Writes& w) {
  std::string out(1, kFormat);
  put_be(out, w.ranges.size(), 4);
  for (const auto& [start, end] : w.ranges) {
    put_str(out, start);
    put_str(out, end);
  }
  put_be(out, w.deletes.size(), 4);
  for (const auto& k : w.deletes) {
    put_str(out, k);
  }
  put_be(out, w.puts.size(), 4);
  for (const auto& e : w.puts) {
    put_str(out, e.key);
    put_str(out, e.value);
  }
  return out;
}

/// Reads what encode() wrote; nullopt when the bytes are not exactly that.
std::optional<Writes> decode(std::string_view in) {
  std::size_t pos = 0;
  auto need = [&](std::size_t n) {
    return in.size() - pos >= n;
  };
  auto count = [&](std::uint64_t& n) {
    if (!need(4)) {
      return false;
    }
    n = get_be(in, pos, 4);
    pos += 4;
    return true;
  };
  auto str = [&](std::string& s) {
    std::uint64_t n = 0;
    if (!count(n) || !need(n)) {
      return false;
    }
    s.assign(in.substr(pos, n));
    pos += n;
    return true;
  };
  if (!need(1) || in[0] != kFormat) {
    return std::nullopt;
  }
  pos = 1;
  Writes w;
  std::uint64_t n = 0;
  if (!count(n)) {
    return std::nullopt;
  }
  for (std::uint64_t i = 0; i < n; ++i) {
    std::string start, end;
    if (!str(start) || !str(end)) {
      return std::nullopt;
    }
    w.ranges.emplace_back(std::move(start), std::move(end));
  }
  if (!count(n)) {
    return std::nullopt;
  }
  for (std::uint64_t i = 0; i < n; ++i) {
    std::string k;
    if (!str(k)) {
      return std::nullopt;
    }
    w.deletes.push_back(std::move(k));
  }
  if (!count(n)) {
    return std::nullopt;
  }
  for (std::uint64_t i = 0; i < n; ++i) {
    storage::KvEntry e;
    if (!str(e.key) || !str(e.value)) {
      return std::nullopt;
    }
    w.puts.push_back(std::move(e));
  }
  if (pos != in.size()) {
    return std::nullopt;
  }
  return w;
}

/// Packs puts into requests within the limits, in order.
void pack_puts(std::vector<storage::KvEntry> puts, std::vector<envoy::KvPutRequest>& out) {
  envoy::KvPutRequest put;
  std::size_t bytes = 0;
  for (auto& entry : puts) {
    const std::size_t size = entry.key.size() + 2 + entry.value.size();
    if (!put.keys.empty()
        && (put.keys.size() + 1 > kMaxKeysPerRequest || bytes + size > kMaxPutBytes)) {
      out.push_back(std::move(put));
      put = envoy::KvPutRequest{};
      bytes = 0;
    }
    put.keys.push_back(std::move(entry.key));
    put.values.push_back(std::move(entry.value));
    bytes += size;
  }
  if (!put.keys.empty()) {
    out.push_back(std::move(put));
  }
}

}  // namespace

std::vector<envoy::KvRequestData> apply_requests(Writes writes) {
  std::vector<envoy::KvRequestData> out;
  for (auto& [start, end] : writes.ranges) {
    out.emplace_back(envoy::KvDeleteRangeRequest{std::move(start), std::move(end)});
  }
  for (std::size_t i = 0; i < writes.deletes.size(); i += kMaxKeysPerRequest) {
    envoy::KvDeleteRequest del;
    const std::size_t last = std::min(writes.deletes.size(), i + kMaxKeysPerRequest);
    for (std::size_t j = i; j < last; ++j) {
      del.keys.push_back(std::move(writes.deletes[j]));
    }
    out.emplace_back(std::move(del));
  }
  std::vector<envoy::KvPutRequest> puts;
  pack_puts(std::move(writes.puts), puts);
  for (auto& p : puts) {
    out.emplace_back(std::move(p));
  }
  return out;
}

std::vector<envoy::KvPutRequest> journal_puts(const Writes& writes,
                                              std::uint32_t generation,
                                              std::uint64_t seq) {
  const std::string bytes = encode(writes);
  // Chunk 0 carries the sequence number and the chunk count; every other chunk the sequence
  // number, so a chunk left by an earlier, unfinished journal is never taken for this one's.
  constexpr std::size_t kFirstHeader = 8 + 4;
  constexpr std::size_t kHeader = 8;
  std::vector<storage::KvEntry> rest;
  std::string first;
  std::size_t pos = std::min(bytes.size(), kChunkBytes - kFirstHeader);
  const std::string_view head(bytes.data(), pos);
  for (std::uint32_t chunk = 1; pos < bytes.size(); ++chunk) {
    const std::size_t n = std::min(bytes.size() - pos, kChunkBytes - kHeader);
    std::string value;
    put_be(value, seq, 8);
    value.append(bytes, pos, n);
    pos += n;
    rest.push_back(storage::KvEntry{chunk_key(generation, chunk), std::move(value)});
  }
  put_be(first, seq, 8);
  put_be(first, rest.size() + 1, 4);
  first += head;
  std::vector<envoy::KvPutRequest> out;
  pack_puts(std::move(rest), out);
  envoy::KvPutRequest last;
  last.keys.push_back(chunk_key(generation, 0));
  last.values.push_back(std::move(first));
  out.push_back(std::move(last));
  return out;
}

std::pair<std::string, std::string> journal_range_through(std::uint32_t generation) {
  return {generation_start(0), generation_start(std::uint64_t{generation} + 1)};
}

std::pair<std::string, std::string> journal_range_of(std::uint32_t generation) {
  return {generation_start(generation), generation_start(std::uint64_t{generation} + 1)};
}

Result<std::vector<Found>> complete_journals(const std::vector<storage::KvEntry>& entries,
                                             std::uint32_t generation) {
  // generation -> chunk -> value
  std::map<std::uint32_t, std::map<std::uint32_t, std::string_view>> gens;
  for (const auto& e : entries) {
    if (e.key.size() != 9 || e.key[0] != kJournalPrefix) {
      continue;
    }
    const auto gen = static_cast<std::uint32_t>(get_be(e.key, 1, 4));
    if (gen <= generation) {
      gens[gen][static_cast<std::uint32_t>(get_be(e.key, 5, 4))] = e.value;
    }
  }
  std::vector<Found> out;
  for (const auto& [gen, chunks] : gens) {
    auto first = chunks.find(0);
    if (first == chunks.end() || first->second.size() < 12) {
      continue;  // never reached its commit point
    }
    const std::uint64_t seq = get_be(first->second, 0, 8);
    const auto count = static_cast<std::uint32_t>(get_be(first->second, 8, 4));
    std::string bytes(first->second.substr(12));
    bool complete = count >= 1;
    for (std::uint32_t c = 1; complete && c < count; ++c) {
      auto it = chunks.find(c);
      if (it == chunks.end() || it->second.size() < 8 || get_be(it->second, 0, 8) != seq) {
        complete = false;
      } else {
        bytes += it->second.substr(8);
      }
    }
    if (!complete) {
      // Chunk 0 is written only after every other chunk was acknowledged.
      return fail(Error{"engine", "journal_corrupt",
                        "The commit journal of generation " + std::to_string(gen)
                            + " reached its commit point but misses chunks",
                        std::nullopt, false});
    }
    auto writes = decode(bytes);
    if (!writes) {
      return fail(
          Error{"engine", "journal_corrupt",
                "The commit journal of generation " + std::to_string(gen) + " does not decode",
                std::nullopt, false});
    }
    out.push_back(Found{gen, std::move(*writes)});
  }
  return out;
}

}  // namespace rivetkit::engine::journal
