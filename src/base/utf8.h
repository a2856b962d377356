// UTF-8 decoding, strict: the one place that says what a valid sequence is.
#pragma once

#include <cstddef>
#include <string_view>

namespace airlock {

// Length of the valid UTF-8 sequence starting at s[i] (no overlongs, no
// surrogates, at most U+10FFFF), or 0. `code_point` receives its value.
size_t utf8_sequence(std::string_view s, size_t i, char32_t* code_point = nullptr);

// True when s[i..] is the start of a sequence that may still become valid
// once more bytes follow (a lead byte and fewer continuation bytes than it
// announces, all of them plausible so far).
bool utf8_incomplete(std::string_view s, size_t i);

bool valid_utf8(std::string_view s);

}  // namespace airlock
