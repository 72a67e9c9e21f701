#include "util/log.hpp"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace rivetkit::log {

namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return out;
}

/// RivetKit's (pino's) level names.
std::string_view level_name(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace:
      return "trace";
    case spdlog::level::debug:
      return "debug";
    case spdlog::level::info:
      return "info";
    case spdlog::level::warn:
      return "warn";
    case spdlog::level::err:
      return "error";
    case spdlog::level::critical:
      return "fatal";
    default:
      return "off";
  }
}

/// Appends `text` as the body of a JSON string: quotes, backslashes and control characters
/// escaped, and any byte that is not part of valid UTF-8 replaced by U+FFFD, so that a line is
/// valid JSON whatever a client put into a name or a message.
void append_json_string(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::size_t i = 0;
  while (i < text.size()) {
    auto ch = static_cast<unsigned char>(text[i]);
    if (ch < 0x80) {
      if (ch == '"' || ch == '\\') {
        out += '\\';
        out += static_cast<char>(ch);
      } else if (ch == '\n') {
        out += "\\n";
      } else if (ch == '\r') {
        out += "\\r";
      } else if (ch == '\t') {
        out += "\\t";
      } else if (ch < 0x20 || ch == 0x7F) {
        out += "\\u00";
        out += kHex[ch >> 4];
        out += kHex[ch & 0xF];
      } else {
        out += static_cast<char>(ch);
      }
      ++i;
      continue;
    }
    // A multi-byte sequence: its length from the lead byte, then continuation bytes, no
    // overlong forms, no surrogates, nothing above U+10FFFF.
    std::size_t len = ch >= 0xC2 && ch <= 0xDF   ? 2
                      : ch >= 0xE0 && ch <= 0xEF ? 3
                      : ch >= 0xF0 && ch <= 0xF4 ? 4
                                                 : 0;
    bool valid = len != 0 && i + len <= text.size();
    for (std::size_t k = 1; valid && k < len; ++k) {
      valid = (static_cast<unsigned char>(text[i + k]) & 0xC0) == 0x80;
    }
    if (valid && len >= 3) {
      auto second = static_cast<unsigned char>(text[i + 1]);
      valid = !(ch == 0xE0 && second < 0xA0) && !(ch == 0xED && second >= 0xA0)
              && !(ch == 0xF0 && second < 0x90) && !(ch == 0xF4 && second >= 0x90);
    }
    if (valid) {
      out.append(text.substr(i, len));
      i += len;
    } else {
      out += "\\ufffd";
      ++i;
    }
  }
}

void append_member(std::string& out, std::string_view key, std::string_view value) {
  out += ",\"";
  append_json_string(out, key);
  out += "\":\"";
  append_json_string(out, value);
  out += '"';
}

/// `actor_id` -> `actorId`.
std::string camel_case(std::string_view snake) {
  std::string out;
  bool upper = false;
  for (char ch : snake) {
    if (ch == '_') {
      upper = !out.empty();
      continue;
    }
    out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(ch))) : ch;
    upper = false;
  }
  return out;
}

bool is_field_key(std::string_view key) {
  return !key.empty()
         && std::all_of(key.begin(), key.end(),
                        [](char ch) {
                          return (ch >= 'a' && ch <= 'z') || ch == '_' || (ch >= '0' && ch <= '9');
                        })
         && key.front() >= 'a' && key.front() <= 'z';
}

/// The fields of the message being written on this thread (log::write), read by the JSON
/// formatter, which spdlog runs synchronously in the logging thread.
thread_local std::span<const Field> current_fields;

std::string utc_timestamp(std::chrono::system_clock::time_point time) {
  auto since_epoch = time.time_since_epoch();
  auto seconds = std::chrono::duration_cast<std::chrono::seconds>(since_epoch);
  auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(since_epoch - seconds);
  std::time_t t = static_cast<std::time_t>(seconds.count());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[96];  // room for any int the compiler assumes
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(millis.count()));
  return buf;
}

class JsonFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    std::string line =
        json_line(utc_timestamp(msg.time), msg.level,
                  std::string_view(msg.payload.data(), msg.payload.size()), current_fields);
    line += '\n';
    dest.append(line.data(), line.data() + line.size());
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<JsonFormatter>();
  }
};

Format active_format = Format::kText;

}  // namespace

std::optional<spdlog::level::level_enum> parse_level(std::string_view text) {
  std::string name = lower(text);
  if (name == "warning") {
    name = "warn";
  } else if (name == "error" || name == "fatal") {
    name = "err";
  }
  // spdlog maps every unknown name to off: only "off" itself may mean off.
  auto level = spdlog::level::from_str(name);
  if (level == spdlog::level::off && name != "off") {
    return std::nullopt;
  }
  return level;
}

std::optional<Format> parse_format(std::string_view text) {
  std::string name = lower(text);
  if (name == "text") {
    return Format::kText;
  }
  if (name == "json") {
    return Format::kJson;
  }
  return std::nullopt;
}

std::string json_line(std::string_view timestamp,
                      spdlog::level::level_enum level,
                      std::string_view message,
                      std::span<const Field> extra) {
  std::string out = "{\"ts\":\"";
  append_json_string(out, timestamp);
  out += "\",\"level\":\"";
  out += level_name(level);
  out += "\",\"msg\":\"";
  append_json_string(out, message);
  out += '"';
  std::vector<std::string> names;
  for (const auto& f : extra) {
    append_member(out, f.key, f.value);
    names.emplace_back(f.key);
  }
  // key=value tokens of the text: a key at the start or after a space, the value up to the
  // next space.
  std::size_t pos = 0;
  while ((pos = message.find('=', pos)) != std::string_view::npos) {
    std::size_t key_start = message.rfind(' ', pos);
    key_start = key_start == std::string_view::npos ? 0 : key_start + 1;
    std::string_view key = message.substr(key_start, pos - key_start);
    std::size_t value_end = message.find(' ', pos + 1);
    if (value_end == std::string_view::npos) {
      value_end = message.size();
    }
    std::string_view value = message.substr(pos + 1, value_end - pos - 1);
    pos = value_end;
    if (!is_field_key(key) || value.empty()) {
      continue;
    }
    // A trailing comma or colon belongs to the sentence, not the value.
    while (!value.empty() && (value.back() == ',' || value.back() == ':' || value.back() == ';')) {
      value.remove_suffix(1);
    }
    std::string name = camel_case(key);
    if (std::find(names.begin(), names.end(), name) != names.end()) {
      continue;
    }
    append_member(out, name, value);
    names.push_back(std::move(name));
  }
  out += '}';
  return out;
}

void init() {
  static std::once_flag once;
  std::call_once(once, [] {
    auto logger = spdlog::stderr_color_mt("rivetkit");
    spdlog::set_default_logger(logger);
    spdlog::set_level(spdlog::level::info);
    if (const char* lvl = std::getenv("RIVET_LOG_LEVEL"); lvl != nullptr && *lvl != '\0') {
      // Anything unknown keeps info rather than silencing the log.
      auto level = parse_level(lvl);
      if (!level) {
        std::fprintf(stderr, "RIVET_LOG_LEVEL=%s is not a log level; using info\n", lvl);
      }
      spdlog::set_level(level.value_or(spdlog::level::info));
    }
    if (const char* fmt = std::getenv("RIVET_LOG_FORMAT"); fmt != nullptr && *fmt != '\0') {
      auto format = parse_format(fmt);
      if (!format) {
        std::fprintf(stderr, "RIVET_LOG_FORMAT=%s is not a log format; using text\n", fmt);
      }
      active_format = format.value_or(Format::kText);
    }
    if (active_format == Format::kJson) {
      logger->set_formatter(std::make_unique<JsonFormatter>());
    } else {
      spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %^%l%$ %v", spdlog::pattern_time_type::utc);
    }
  });
}

void write(spdlog::level::level_enum level,
           std::span<const Field> fields,
           std::string_view message) {
  auto* logger = spdlog::default_logger_raw();
  if (!logger->should_log(level)) {
    return;
  }
  if (active_format == Format::kJson) {
    current_fields = fields;
    logger->log(level, message);
    current_fields = {};
    return;
  }
  std::string line(message);
  for (const auto& f : fields) {
    line += ' ';
    line += f.key;
    line += '=';
    line += f.value;
  }
  logger->log(level, line);
}

}  // namespace rivetkit::log
