#pragma once
// Process metrics in Prometheus's text format (version 0.0.4), served at /metrics.
//
// One registry per process, as Prometheus client libraries have: the parts that count (the HTTP
// server, WebSockets, the storage writer, actor slots, actions) record into it without being
// handed a sink, and every Registry in the process reports through one endpoint. Recording is a
// relaxed atomic add on a series the caller looked up once (or per call, under a shared lock, for
// series labelled by runtime values such as an action's name).
//
// Label values come from the program (actor and action names from definitions, error codes) and
// from clients only through those names, never raw: a family still holds at most
// kMaxSeriesPerFamily series, past which new label sets share one series whose every label is
// "other", so no input can grow the registry without bound.

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

namespace rivetkit::metrics {

inline constexpr std::size_t kMaxSeriesPerFamily = 2000;

class Counter {
 public:
  void inc(std::uint64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
  std::uint64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::uint64_t> value_{0};
};

class Gauge {
 public:
  void add(std::int64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
  void sub(std::int64_t n = 1) { value_.fetch_sub(n, std::memory_order_relaxed); }
  void set(std::int64_t n) { value_.store(n, std::memory_order_relaxed); }
  std::int64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::int64_t> value_{0};
};

/// Observations in integer units (nanoseconds, items); rendered divided by the family's scale
/// (1e9 for seconds), so recording needs no floating-point atomics.
class Histogram {
 public:
  explicit Histogram(const std::vector<std::uint64_t>* bounds);
  void observe(std::uint64_t units);

  struct Snapshot {
    std::vector<std::uint64_t> cumulative;  // one per bound, then +Inf
    std::uint64_t sum = 0;
    std::uint64_t count = 0;
  };
  Snapshot snapshot() const;

 private:
  const std::vector<std::uint64_t>* bounds_;
  std::unique_ptr<std::atomic<std::uint64_t>[]> buckets_;  // bounds_->size() + 1
  std::atomic<std::uint64_t> sum_{0};
  std::atomic<std::uint64_t> count_{0};
};

enum class Kind { kCounter, kGauge, kHistogram };

/// A metric's series by label values (each family's series share its label names).
template <class M>
class Family {
 public:
  /// The series for `values` (one per label name, in order), created on first use.
  M& with(std::initializer_list<std::string_view> values);
  /// The series without labels (families declared with none).
  M& get() { return with({}); }

  std::string name;
  std::string help;
  std::vector<std::string> labels;
  Kind kind = Kind::kCounter;
  std::vector<std::uint64_t> bounds;  // histograms: bucket upper bounds, in units
  double scale = 1;                   // histograms: units per rendered unit

  /// Calls f(label values, series) for each series, in label order.
  template <class F>
  void each(F&& f) const;

 private:
  M& create(std::string key, std::vector<std::string> values);

  mutable std::shared_mutex mutex_;
  std::unordered_map<std::string, std::unique_ptr<M>> by_key_;
  std::vector<std::pair<std::vector<std::string>, M*>> series_;
};

class Registry {
 public:
  Family<Counter>& counter(std::string name,
                           std::string help,
                           std::vector<std::string> labels = {});
  Family<Gauge>& gauge(std::string name, std::string help, std::vector<std::string> labels = {});
  /// Buckets' upper bounds and the sum in units; `scale` units make one rendered unit.
  Family<Histogram>& histogram(std::string name,
                               std::string help,
                               std::vector<std::string> labels,
                               std::vector<std::uint64_t> bounds,
                               double scale);

  /// Every family in the text exposition format.
  std::string render() const;

 private:
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Family<Counter>>> counters_;
  std::vector<std::unique_ptr<Family<Gauge>>> gauges_;
  std::vector<std::unique_ptr<Family<Histogram>>> histograms_;
};

/// The process's registry.
Registry& registry();

/// Bucket bounds in nanoseconds for latencies from 50 µs to 10 s.
std::vector<std::uint64_t> latency_bounds_ns();

/// Escapes a label value for the text format (backslash, double quote, newline).
std::string escape_label(std::string_view value);

/// The Content-Type of render()'s output.
inline constexpr std::string_view kContentType = "text/plain; version=0.0.4; charset=utf-8";

// ---- the runtime's metrics (one definition each; docs/operations.md lists them) ---------------

struct RuntimeMetrics {
  Family<Gauge>& actors_awake;          // {actor}
  Family<Counter>& actor_starts;        // {actor}
  Family<Counter>& actor_stops;         // {actor, reason}
  Family<Counter>& actions;             // {actor, action}
  Family<Counter>& action_errors;       // {actor, action, code}
  Family<Histogram>& action_duration;   // {actor, action}
  Family<Gauge>& connections;           // {actor}
  Family<Counter>& connections_opened;  // {actor}
  Family<Counter>& bytes_received;      // {transport}
  Family<Counter>& bytes_sent;          // {transport}
  Family<Histogram>& commit_batch;      // storage writer: writes per group commit
  Family<Histogram>& commit_duration;   // storage writer: COMMIT (WAL write and fsync)
  Family<Histogram>& engine_kv_write;   // engine mode: a KV write's round trip
};

/// The runtime's metric families, registered on first use.
RuntimeMetrics& runtime();

// ---- Family implementation ----------------------------------------------------------------------

template <class M>
M& Family<M>::with(std::initializer_list<std::string_view> values) {
  std::string key;
  for (std::string_view v : values) {
    key.append(v);
    key.push_back('\x1f');
  }
  {
    std::shared_lock lock(mutex_);
    if (auto it = by_key_.find(key); it != by_key_.end()) {
      return *it->second;
    }
  }
  std::vector<std::string> owned;
  owned.reserve(values.size());
  for (std::string_view v : values) {
    owned.emplace_back(v);
  }
  return create(std::move(key), std::move(owned));
}

template <class M>
M& Family<M>::create(std::string key, std::vector<std::string> values) {
  std::unique_lock lock(mutex_);
  if (auto it = by_key_.find(key); it != by_key_.end()) {
    return *it->second;
  }
  if (by_key_.size() >= kMaxSeriesPerFamily) {
    values.assign(values.size(), "other");
    key.clear();
    for (const auto& v : values) {
      key.append(v);
      key.push_back('\x1f');
    }
    if (auto it = by_key_.find(key); it != by_key_.end()) {
      return *it->second;
    }
  }
  std::unique_ptr<M> series;
  if constexpr (std::is_same_v<M, Histogram>) {
    series = std::make_unique<M>(&bounds);
  } else {
    series = std::make_unique<M>();
  }
  M& ref = *series;
  by_key_.emplace(std::move(key), std::move(series));
  series_.emplace_back(std::move(values), &ref);
  return ref;
}

template <class M>
template <class F>
void Family<M>::each(F&& f) const {
  std::vector<std::pair<std::vector<std::string>, M*>> copy;
  {
    std::shared_lock lock(mutex_);
    copy = series_;
  }
  std::sort(copy.begin(), copy.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [values, series] : copy) {
    f(values, *series);
  }
}

}  // namespace rivetkit::metrics
