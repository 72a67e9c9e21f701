// The metrics registry: series by labels, the text format, histogram buckets, the bound on
// series per family, concurrent recording.

#include "util/metrics.hpp"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace rivetkit::metrics {
namespace {

TEST(Metrics, CountersAndGaugesRenderByLabel) {
  Registry r;
  auto& calls = r.counter("t_calls_total", "Calls", {"actor", "action"});
  calls.with({"counter", "increment"}).inc();
  calls.with({"counter", "increment"}).inc(2);
  calls.with({"chat", "say"}).inc();
  auto& open = r.gauge("t_open", "Open things");
  open.get().add(5);
  open.get().sub(2);
  const std::string text = r.render();
  EXPECT_NE(text.find("# HELP t_calls_total Calls\n# TYPE t_calls_total counter\n"),
            std::string::npos);
  // Series in label order.
  EXPECT_NE(text.find("t_calls_total{actor=\"chat\",action=\"say\"} 1\n"
                      "t_calls_total{actor=\"counter\",action=\"increment\"} 3\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("# TYPE t_open gauge\nt_open 3\n"), std::string::npos) << text;
}

TEST(Metrics, LabelValuesAreEscaped) {
  Registry r;
  r.counter("t_x_total", "X", {"name"}).with({"a\"b\\c\nd"}).inc();
  EXPECT_NE(r.render().find("t_x_total{name=\"a\\\"b\\\\c\\nd\"} 1\n"), std::string::npos)
      << r.render();
  EXPECT_EQ(escape_label("plain"), "plain");
}

TEST(Metrics, HistogramBucketsAreCumulativeWithSumAndCount) {
  Registry r;
  auto& h = r.histogram("t_seconds", "Durations", {"op"}, {1'000'000, 10'000'000}, 1e9);
  auto& series = h.with({"read"});
  series.observe(500'000);     // <= 1 ms
  series.observe(1'000'000);   // <= 1 ms (bounds are inclusive)
  series.observe(5'000'000);   // <= 10 ms
  series.observe(50'000'000);  // +Inf
  const std::string text = r.render();
  EXPECT_NE(text.find("# TYPE t_seconds histogram\n"
                      "t_seconds_bucket{op=\"read\",le=\"0.001\"} 2\n"
                      "t_seconds_bucket{op=\"read\",le=\"0.01\"} 3\n"
                      "t_seconds_bucket{op=\"read\",le=\"+Inf\"} 4\n"
                      "t_seconds_sum{op=\"read\"} 0.0565\n"
                      "t_seconds_count{op=\"read\"} 4\n"),
            std::string::npos)
      << text;
}

TEST(Metrics, SeriesPerFamilyAreBounded) {
  Registry r;
  auto& f = r.counter("t_many_total", "Many", {"name"});
  for (std::size_t i = 0; i < kMaxSeriesPerFamily + 500; ++i) {
    f.with({"n" + std::to_string(i)}).inc();
  }
  std::size_t lines = 0;
  const std::string text = r.render();
  for (std::size_t pos = 0; (pos = text.find("t_many_total{", pos)) != std::string::npos; ++pos) {
    ++lines;
  }
  EXPECT_EQ(lines, kMaxSeriesPerFamily + 1);  // the overflow shares one series
  EXPECT_NE(text.find("t_many_total{name=\"other\"} 500\n"), std::string::npos);
}

TEST(Metrics, SameNameSharesOneFamily) {
  Registry r;
  auto& a = r.counter("t_same_total", "Same", {"k"});
  auto& b = r.counter("t_same_total", "Same", {"k"});
  EXPECT_EQ(&a, &b);
}

TEST(Metrics, ConcurrentRecordingLosesNothing) {
  Registry r;
  auto& f = r.counter("t_concurrent_total", "C", {"t"});
  auto& h = r.histogram("t_concurrent_seconds", "H", {}, latency_bounds_ns(), 1e9);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10'000; ++i) {
        f.with({t % 2 == 0 ? "even" : "odd"}).inc();
        h.get().observe(static_cast<std::uint64_t>(i) * 1000);
      }
    });
  }
  for (auto& th : threads) {
    th.join();
  }
  EXPECT_EQ(f.with({"even"}).value() + f.with({"odd"}).value(), 40'000u);
  EXPECT_EQ(h.get().snapshot().count, 40'000u);
}

TEST(Metrics, RuntimeFamiliesAreRegisteredOnce) {
  auto& m = runtime();
  EXPECT_EQ(&m, &runtime());
  m.actions.with({"unit", "act"}).inc();
  EXPECT_NE(registry().render().find("rivetkit_actions_total{actor=\"unit\",action=\"act\"} 1"),
            std::string::npos);
}

}  // namespace
}  // namespace rivetkit::metrics
