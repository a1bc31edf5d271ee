#pragma once
// Internal: a string as a Graphviz quoted ID (shared by NodeGraph's and Graph's DOT export).

#include <string>

namespace tessera::detail {

inline std::string dot_quote(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') q += '\\';
    q += c;
  }
  return q + '"';
}

}  // namespace tessera::detail
