#pragma once
/// `c.log()`: the actor's logger, as RivetKit's `c.log`. Every line carries the actor's name, key
/// and id, in the server's format (RIVET_LOG_FORMAT: text, or json with one object per line)
/// and at its level (RIVET_LOG_LEVEL).
///
///     c.log().info("charged the card");
///     c.log().warn("payment declined", {{"order", order_id}, {"reason", reason}});

#include <rivetkit/detail/access.hpp>

#include <initializer_list>
#include <string_view>
#include <utility>

namespace rivetkit {

namespace detail {
class ActorApi;
}  // namespace detail

class ActorLog {
 public:
  /// Extra fields of one line: {"key", "value"} pairs.
  using Fields = std::initializer_list<std::pair<std::string_view, std::string_view>>;

  void trace(std::string_view message, Fields fields = {}) const { write(0, message, fields); }
  void debug(std::string_view message, Fields fields = {}) const { write(1, message, fields); }
  void info(std::string_view message, Fields fields = {}) const { write(2, message, fields); }
  void warn(std::string_view message, Fields fields = {}) const { write(3, message, fields); }
  void error(std::string_view message, Fields fields = {}) const { write(4, message, fields); }

 private:
  friend struct detail::Access;
  explicit ActorLog(detail::ActorApi* api) : api_(api) {}
  void write(int level, std::string_view message, Fields fields) const;
  detail::ActorApi* api_;
};

}  // namespace rivetkit
