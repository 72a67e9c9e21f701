#include "util/metrics.hpp"

#include <fmt/format.h>

namespace rivetkit::metrics {

// ---- Histogram ----------------------------------------------------------------------------------

Histogram::Histogram(const std::vector<std::uint64_t>* bounds)
    : bounds_(bounds), buckets_(new std::atomic<std::uint64_t>[bounds->size() + 1]) {
  for (std::size_t i = 0; i <= bounds_->size(); ++i) {
    buckets_[i].store(0, std::memory_order_relaxed);
  }
}

void Histogram::observe(std::uint64_t units) {
  // Bounds are few (under 20) and sorted: a forward scan beats a binary search here.
  std::size_t i = 0;
  const std::size_t n = bounds_->size();
  while (i < n && units > (*bounds_)[i]) {
    ++i;
  }
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(units, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
}

Histogram::Snapshot Histogram::snapshot() const {
  Snapshot s;
  s.cumulative.resize(bounds_->size() + 1);
  std::uint64_t running = 0;
  for (std::size_t i = 0; i <= bounds_->size(); ++i) {
    running += buckets_[i].load(std::memory_order_relaxed);
    s.cumulative[i] = running;
  }
  // The count is the +Inf bucket: read apart, it could disagree with the buckets mid-update.
  s.count = running;
  s.sum = sum_.load(std::memory_order_relaxed);
  return s;
}

// ---- Registry -----------------------------------------------------------------------------------

namespace {

template <class M>
Family<M>& add_family(std::vector<std::unique_ptr<Family<M>>>& list,
                      std::string name,
                      std::string help,
                      std::vector<std::string> labels,
                      Kind kind) {
  for (auto& f : list) {
    if (f->name == name) {
      return *f;  // one definition per name: a second registration shares it
    }
  }
  auto family = std::make_unique<Family<M>>();
  family->name = std::move(name);
  family->help = std::move(help);
  family->labels = std::move(labels);
  family->kind = kind;
  list.push_back(std::move(family));
  return *list.back();
}

std::string escape_help(std::string_view help) {
  std::string out;
  for (char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

void append_labels(std::string& out,
                   const std::vector<std::string>& names,
                   const std::vector<std::string>& values,
                   std::string_view extra_name = {},
                   std::string_view extra_value = {}) {
  if (names.empty() && extra_name.empty()) {
    return;
  }
  out += '{';
  bool first = true;
  for (std::size_t i = 0; i < names.size() && i < values.size(); ++i) {
    if (!first) {
      out += ',';
    }
    first = false;
    out += names[i];
    out += "=\"";
    out += escape_label(values[i]);
    out += '"';
  }
  if (!extra_name.empty()) {
    if (!first) {
      out += ',';
    }
    out += extra_name;
    out += "=\"";
    out += extra_value;
    out += '"';
  }
  out += '}';
}

void append_header(std::string& out, std::string_view name, std::string_view help, Kind kind) {
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, escape_help(help), name,
                     kind == Kind::kCounter ? "counter"
                     : kind == Kind::kGauge ? "gauge"
                                            : "histogram");
}

std::string number(double v) {
  return fmt::format("{}", v);
}

}  // namespace

std::string escape_label(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

Family<Counter>& Registry::counter(std::string name,
                                   std::string help,
                                   std::vector<std::string> labels) {
  std::lock_guard lock(mutex_);
  return add_family(counters_, std::move(name), std::move(help), std::move(labels), Kind::kCounter);
}

Family<Gauge>& Registry::gauge(std::string name,
                               std::string help,
                               std::vector<std::string> labels) {
  std::lock_guard lock(mutex_);
  return add_family(gauges_, std::move(name), std::move(help), std::move(labels), Kind::kGauge);
}

Family<Histogram>& Registry::histogram(std::string name,
                                       std::string help,
                                       std::vector<std::string> labels,
                                       std::vector<std::uint64_t> bounds,
                                       double scale) {
  std::lock_guard lock(mutex_);
  auto& family = add_family(histograms_, std::move(name), std::move(help), std::move(labels),
                            Kind::kHistogram);
  if (family.bounds.empty()) {
    family.bounds = std::move(bounds);
    family.scale = scale;
  }
  return family;
}

std::string Registry::render() const {
  std::vector<Family<Counter>*> counters;
  std::vector<Family<Gauge>*> gauges;
  std::vector<Family<Histogram>*> histograms;
  {
    std::lock_guard lock(mutex_);
    for (const auto& f : counters_) {
      counters.push_back(f.get());
    }
    for (const auto& f : gauges_) {
      gauges.push_back(f.get());
    }
    for (const auto& f : histograms_) {
      histograms.push_back(f.get());
    }
  }
  std::string out;
  for (const auto* f : counters) {
    append_header(out, f->name, f->help, f->kind);
    f->each([&](const std::vector<std::string>& values, const Counter& c) {
      out += f->name;
      append_labels(out, f->labels, values);
      out += fmt::format(" {}\n", c.value());
    });
  }
  for (const auto* f : gauges) {
    append_header(out, f->name, f->help, f->kind);
    f->each([&](const std::vector<std::string>& values, const Gauge& g) {
      out += f->name;
      append_labels(out, f->labels, values);
      out += fmt::format(" {}\n", g.value());
    });
  }
  for (const auto* f : histograms) {
    append_header(out, f->name, f->help, f->kind);
    f->each([&](const std::vector<std::string>& values, const Histogram& h) {
      auto s = h.snapshot();
      for (std::size_t i = 0; i < s.cumulative.size(); ++i) {
        std::string le =
            i < f->bounds.size() ? number(static_cast<double>(f->bounds[i]) / f->scale) : "+Inf";
        out += f->name;
        out += "_bucket";
        append_labels(out, f->labels, values, "le", le);
        out += fmt::format(" {}\n", s.cumulative[i]);
      }
      out += f->name;
      out += "_sum";
      append_labels(out, f->labels, values);
      out += ' ';
      out += number(static_cast<double>(s.sum) / f->scale);
      out += '\n';
      out += f->name;
      out += "_count";
      append_labels(out, f->labels, values);
      out += fmt::format(" {}\n", s.count);
    });
  }
  return out;
}

Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: recorded into until the process exits
  return *r;
}

std::vector<std::uint64_t> latency_bounds_ns() {
  return {50'000,      100'000,       250'000,       500'000,       1'000'000,     2'500'000,
          5'000'000,   10'000'000,    25'000'000,    50'000'000,    100'000'000,   250'000'000,
          500'000'000, 1'000'000'000, 2'500'000'000, 5'000'000'000, 10'000'000'000};
}

RuntimeMetrics& runtime() {
  static RuntimeMetrics* m = [] {
    auto& r = registry();
    return new RuntimeMetrics{
        r.gauge("rivetkit_actors_awake", "Actors running in this process", {"actor"}),
        r.counter("rivetkit_actor_starts_total", "Actor starts (create or wake) in this process",
                  {"actor"}),
        r.counter("rivetkit_actor_stops_total", "Actor stops in this process, by reason",
                  {"actor", "reason"}),
        r.counter("rivetkit_actions_total", "Actions run, by actor and action",
                  {"actor", "action"}),
        r.counter("rivetkit_action_errors_total",
                  "Actions that ended in an error, by actor, action and error code",
                  {"actor", "action", "code"}),
        r.histogram("rivetkit_action_duration_seconds",
                    "Time an action ran, from its start to its result", {"actor", "action"},
                    latency_bounds_ns(), 1e9),
        r.gauge("rivetkit_connections", "Open client connections, by actor", {"actor"}),
        r.counter("rivetkit_connections_opened_total", "Client connections opened, by actor",
                  {"actor"}),
        r.counter("rivetkit_network_bytes_received_total",
                  "Bytes received: HTTP requests (head and body) and WebSocket messages",
                  {"transport"}),
        r.counter("rivetkit_network_bytes_sent_total",
                  "Bytes sent: HTTP responses (head and body) and WebSocket messages",
                  {"transport"}),
        r.histogram("rivetkit_storage_commit_batch_size",
                    "Writes per group commit of the local store", {},
                    {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024}, 1),
        r.histogram("rivetkit_storage_commit_duration_seconds",
                    "Time of a group commit's COMMIT in the local store (WAL write and fsync)", {},
                    latency_bounds_ns(), 1e9),
        r.histogram("rivetkit_engine_kv_write_duration_seconds",
                    "Engine mode: round trip of a KV write to the engine", {}, latency_bounds_ns(),
                    1e9),
    };
  }();
  return *m;
}

}  // namespace rivetkit::metrics
