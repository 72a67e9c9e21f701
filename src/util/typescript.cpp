// TsDeclarations (typescript.hpp): interface names and array types of the `.d.ts` a registry
// describes itself with.
#include <rivetkit/typescript.hpp>

#include <cctype>

namespace rivetkit {

namespace {

/// A TypeScript identifier from a C++ type name: the part after the last `::`, with any
/// character an identifier cannot hold (template brackets, commas, spaces) replaced by `_`.
std::string identifier_from(std::string_view wanted) {
  if (auto colons = wanted.rfind("::"); colons != std::string_view::npos) {
    wanted.remove_prefix(colons + 2);
  }
  std::string out;
  for (char ch : wanted) {
    auto u = static_cast<unsigned char>(ch);
    out.push_back(std::isalnum(u) != 0 || ch == '_' || ch == '$' ? ch : '_');
  }
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out.front())) != 0) {
    out.insert(out.begin(), '_');
  }
  return out;
}

}  // namespace

std::string TsDeclarations::unique_name(std::string_view wanted) {
  std::string base = identifier_from(wanted);
  std::string name = base;
  for (int n = 2; names_.contains(name); ++n) {
    name = base + std::to_string(n);
  }
  names_.emplace(name, nullptr);
  return name;
}

std::size_t TsDeclarations::reserve(const void* tag, std::string_view wanted) {
  std::string name = unique_name(wanted);
  names_[name] = tag;
  interfaces_.push_back(Interface{name, {}});
  by_tag_.emplace(tag, interfaces_.size() - 1);
  return interfaces_.size() - 1;
}

namespace detail {

std::string ts_array_of(const std::string& element) {
  bool simple = true;
  int depth = 0;
  for (char ch : element) {
    if (ch == '<' || ch == '(' || ch == '{' || ch == '[') {
      ++depth;
    } else if (ch == '>' || ch == ')' || ch == '}' || ch == ']') {
      --depth;
    } else if (depth == 0 && (ch == '|' || ch == '&')) {
      simple = false;
    }
  }
  return simple ? element + "[]" : "(" + element + ")[]";
}

}  // namespace detail
}  // namespace rivetkit
