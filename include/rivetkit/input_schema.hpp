#pragma once
/// Action input schemas (RivetKit's `actionInputSchemas`): a check of an action's raw arguments
/// that runs before the handler. A failing check answers the caller with `actor.validation_error`
/// instead of running the action.
///
///     .action("calculator.add", [](auto& c, double amount) {...},
///             rivetkit::tuple_schema<double>())
///
/// Without a schema, an argument the handler's C++ parameter types cannot take is
/// `actor.invalid_request`; with one, anything the schema refuses is `actor.validation_error`.

#include <rivetkit/convert.hpp>
#include <rivetkit/value.hpp>

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

namespace rivetkit {

struct InputSchema {
  /// Returns a description of what is wrong with `args`, or nullopt when they are valid.
  std::function<std::optional<std::string>(const Array& args)> check;
};

namespace detail {
template <class T>
std::optional<std::string> check_schema_arg(const Array& args, std::size_t index) {
  if (index >= args.size()) {
    return "argument " + std::to_string(index) + ": required";
  }
  try {
    (void)from_value<T>(args[index]);
  } catch (const ConversionError& e) {
    return "argument " + std::to_string(index) + ": " + e.what();
  }
  return std::nullopt;
}
}  // namespace detail

/// Exactly `sizeof...(Ts)` arguments, each convertible to its type (a zod tuple).
template <class... Ts>
InputSchema tuple_schema() {
  return InputSchema{[](const Array& args) -> std::optional<std::string> {
    if (args.size() != sizeof...(Ts)) {
      return "expected " + std::to_string(sizeof...(Ts)) + " argument(s), got "
             + std::to_string(args.size());
    }
    std::optional<std::string> problem;
    std::size_t index = 0;
    ((problem = problem ? problem : detail::check_schema_arg<Ts>(args, index++)), ...);
    return problem;
  }};
}

}  // namespace rivetkit
