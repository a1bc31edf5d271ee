#pragma once
// Whether each hand-written baseline's hot loops vectorised, as the compiler reported it on the
// compile that produced the baseline's object (hot_loops.cmake generates the table). Suites print
// it at start-up, so a scalar baseline cannot pass unnoticed in a comparison.
//
//   #include "hot_loops.generated.hpp"
//   tessera::bench::print_hot_loops(tessera::bench::kBaselineHotLoops, tessera::bench::kBaselineCompiler);

#include <cstdio>
#include <span>

namespace tessera::bench {

struct HotLoop {
  enum class Verdict { kVectorised, kScalar, kUnknown };
  const char* name;           ///< the `// hot-loop: NAME` tag
  const char* file;           ///< the baseline source's file name
  int first_line, last_line;  ///< from the tagged `for` to its closing brace
  Verdict verdict;
  const char* detail;  ///< vector width, or the compiler's first reason not to vectorise
};

/// "baseline hot loops vectorised: sweep-x yes, wavespeed NO", then one line per loop with where
/// it is and what the compiler said. Returns whether every loop vectorised.
inline bool print_hot_loops(std::span<const HotLoop> loops, const char* compiler) {
  bool all = true;
  std::printf("baseline hot loops vectorised:");
  for (std::size_t k = 0; k < loops.size(); ++k) {
    const HotLoop& l = loops[k];
    const char* v = l.verdict == HotLoop::Verdict::kVectorised ? "yes"
                    : l.verdict == HotLoop::Verdict::kScalar   ? "NO"
                                                               : "unknown";
    std::printf("%s %s %s", k == 0 ? "" : ",", l.name, v);
    all = all && l.verdict == HotLoop::Verdict::kVectorised;
  }
  std::printf(" (%s's vectoriser report)\n", compiler);
  for (const HotLoop& l : loops)
    std::printf("  %-16s %s:%d-%d: %s\n", l.name, l.file, l.first_line, l.last_line, l.detail);
  return all;
}

}  // namespace tessera::bench
