#pragma once
/// Result<T>: a value or a rivetkit::Error. Kept as one alias so it can switch to
/// std::expected when the toolchain has it.

#include <rivetkit/error.hpp>

#include <tl/expected.hpp>

namespace rivetkit {

template <class T>
using Result = tl::expected<T, Error>;

/// Builds the error side of a Result: `return fail(Error{...});`
inline tl::unexpected<Error> fail(Error e) {
  return tl::unexpected<Error>(std::move(e));
}

}  // namespace rivetkit
