// util/log: the JSON line format (RIVET_LOG_FORMAT=json) and the names the environment takes.
#include "util/log.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using rivetkit::log::Field;
using rivetkit::log::json_line;

TEST(JsonLog, TimestampLevelMessageAndFields) {
  std::vector<Field> fields{{"actor", "counter"}, {"key", "[\"a\"]"}, {"actorId", "abc"}};
  EXPECT_EQ(json_line("2026-12-06T10:00:00.123Z", spdlog::level::info, "charged", fields),
            R"({"ts":"2026-12-06T10:00:00.123Z","level":"info","msg":"charged",)"
            R"("actor":"counter","key":"[\"a\"]","actorId":"abc"})");
  EXPECT_EQ(json_line("t", spdlog::level::warn, "", {}), R"({"ts":"t","level":"warn","msg":""})");
  EXPECT_EQ(json_line("t", spdlog::level::err, "x", {}), R"({"ts":"t","level":"error","msg":"x"})");
  EXPECT_EQ(json_line("t", spdlog::level::critical, "x", {}),
            R"({"ts":"t","level":"fatal","msg":"x"})");
}

TEST(JsonLog, KeyValueTokensOfTheTextBecomeCamelCaseMembers) {
  EXPECT_EQ(json_line("t", spdlog::level::info,
                      "action failed: actor_id=a1 action=increment, conn_id=c9", {}),
            R"({"ts":"t","level":"info","msg":"action failed: actor_id=a1 action=increment, )"
            R"(conn_id=c9","actorId":"a1","action":"increment","connId":"c9"})");
  // Not fields: no key, an upper-case key, an empty value, `==`.
  EXPECT_EQ(json_line("t", spdlog::level::info, "=x Key=1 a= b==c", {}),
            R"({"ts":"t","level":"info","msg":"=x Key=1 a= b==c","b":"=c"})");
  // A field given apart wins over the same name in the text.
  std::vector<Field> fields{{"actorId", "given"}};
  EXPECT_EQ(json_line("t", spdlog::level::info, "actor_id=text", fields),
            R"({"ts":"t","level":"info","msg":"actor_id=text","actorId":"given"})");
}

TEST(JsonLog, EveryLineIsValidJsonWhateverTheBytes) {
  std::string message =
      "q\"b\\s\nn\tt\x01 \x7f ok\xC3\xA9 bad\xC3 \xFF \xED\xA0\x80 \xF0\x9F\x98\x80";
  EXPECT_EQ(json_line("t", spdlog::level::info, message, {}),
            "{\"ts\":\"t\",\"level\":\"info\",\"msg\":\"q\\\"b\\\\s\\nn\\tt\\u0001 \\u007f "
            "ok\xC3\xA9 bad\\ufffd \\ufffd \\ufffd\\ufffd\\ufffd \xF0\x9F\x98\x80\"}");
}

TEST(JsonLog, FormatAndLevelNames) {
  EXPECT_EQ(rivetkit::log::parse_format("JSON"), rivetkit::log::Format::kJson);
  EXPECT_EQ(rivetkit::log::parse_format("text"), rivetkit::log::Format::kText);
  EXPECT_FALSE(rivetkit::log::parse_format("xml"));
  EXPECT_EQ(rivetkit::log::parse_level("Warning"), spdlog::level::warn);
  EXPECT_FALSE(rivetkit::log::parse_level("loud"));
}

}  // namespace
