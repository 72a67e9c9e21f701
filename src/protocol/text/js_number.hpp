#pragma once
// JavaScript's Number::toString(10) for doubles (ECMA-262 §6.1.6.1.20): the shortest digits that
// round-trip, written in fixed notation when the decimal exponent is in [-7, 21) and as
// "d.ddde+N" otherwise. Used by JSON stringify and wherever a number becomes a JS property key.

#include <string>

namespace rivetkit::protocol::text {

/// Appends the JS string form of `d`: "1.5", "-0.001", "1e+21", "1e-7", "4294967296", "0" for -0,
/// "NaN", "Infinity", "-Infinity".
void append_js_number(double d, std::string& out);

}  // namespace rivetkit::protocol::text
