// How deeply a JSON or TOML text nests, found by one pass over the bytes:
// no parser, no recursion, no allocation. Parsers are iterative, but what
// is done with their result (copies, dumps, comparisons, schema walks) is
// recursive, so text from outside is measured with this before it is
// parsed: a few hundred thousand `[` must not overflow a stack.
#pragma once

#include <cstddef>
#include <string_view>

namespace airlock {

// Configuration files (TOML): the deepest an operator's file may nest.
inline constexpr size_t kMaxConfigDepth = 32;

enum class NestingSyntax {
  kJson,  // strings "..." with \ escapes
  kToml,  // also '...', """...""", '''...''' and # comments
};

// The deepest nesting of arrays and objects (TOML: arrays, inline tables and
// table headers) in `text`: "1" is 0, "[]" is 1, {"a":[2]} is 2. Brackets
// inside strings and comments do not count. The scan stops as soon as the
// depth exceeds `stop_above` (and returns that depth). Malformed text is
// measured as far as it goes; refusing it is the parser's job.
[[nodiscard]] size_t nesting_depth(std::string_view text, size_t stop_above,
                                   NestingSyntax syntax = NestingSyntax::kJson);

// Whether `text` nests at most `max_depth` levels deep.
[[nodiscard]] inline bool nesting_within(std::string_view text, size_t max_depth,
                                         NestingSyntax syntax = NestingSyntax::kJson) {
  return nesting_depth(text, max_depth, syntax) <= max_depth;
}

}  // namespace airlock
