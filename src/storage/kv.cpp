#include "storage/kv.hpp"

#include <string_view>

namespace rivetkit::storage {

void KvBatch::append(KvBatch other) {
  if (ops_.empty()) {
    ops_ = std::move(other.ops_);
    return;
  }
  ops_.reserve(ops_.size() + other.ops_.size());
  for (auto& op : other.ops_) {
    ops_.push_back(std::move(op));
  }
}

KvBatch::Normalized KvBatch::normalized() const {
  // key -> value (a put) or nullopt (a delete), for the single-key writes still in effect.
  std::map<std::string, std::optional<std::string>, std::less<>> points;
  Normalized out;
  for (const KvOp& op : ops_) {
    if (const auto* put = std::get_if<KvPut>(&op)) {
      points[put->key] = put->value;
    } else if (const auto* del = std::get_if<KvDelete>(&op)) {
      points[del->key] = std::nullopt;
    } else {
      const auto& range = std::get<KvDeleteRange>(op);
      if (range.start >= range.end) {
        continue;
      }
      points.erase(points.lower_bound(range.start), points.lower_bound(range.end));
      out.ranges.emplace_back(range.start, range.end);
    }
  }
  for (auto& [key, value] : points) {
    if (value) {
      out.puts.push_back(KvEntry{key, *value});
    } else {
      out.deletes.push_back(key);
    }
  }
  return out;
}

std::optional<std::string> prefix_end(std::string_view prefix) {
  std::string end(prefix);
  while (!end.empty()) {
    auto last = static_cast<unsigned char>(end.back());
    if (last != 0xff) {
      end.back() = static_cast<char>(last + 1);
      return end;
    }
    end.pop_back();
  }
  return std::nullopt;
}

void apply_kv(std::map<std::string, std::string>& map, const KvBatch& batch) {
  for (const KvOp& op : batch.ops()) {
    if (const auto* put = std::get_if<KvPut>(&op)) {
      map[put->key] = put->value;
    } else if (const auto* del = std::get_if<KvDelete>(&op)) {
      map.erase(del->key);
    } else {
      const auto& range = std::get<KvDeleteRange>(op);
      if (range.start < range.end) {
        map.erase(map.lower_bound(range.start), map.lower_bound(range.end));
      }
    }
  }
}

std::vector<KvEntry> list_kv(const std::map<std::string, std::string>& map, const KvQuery& query) {
  std::string start = query.prefix ? *query.prefix : query.start;
  std::optional<std::string> end = query.prefix ? prefix_end(*query.prefix) : query.end;
  std::vector<KvEntry> out;
  if (end && start >= *end) {
    return out;
  }
  auto first = map.lower_bound(start);
  auto last = end ? map.lower_bound(*end) : map.end();
  const std::uint64_t limit = query.limit.value_or(UINT64_MAX);
  if (!query.reverse) {
    for (auto it = first; it != last && out.size() < limit; ++it) {
      out.push_back(KvEntry{it->first, it->second});
    }
  } else {
    for (auto it = last; it != first && out.size() < limit;) {
      --it;
      out.push_back(KvEntry{it->first, it->second});
    }
  }
  return out;
}

}  // namespace rivetkit::storage
