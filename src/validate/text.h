// Text from the sandbox (column names, cells, JSON keys) ends up in check
// details, which go into the JSON job record: it must come out short and
// valid UTF-8, with control characters visible.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace airlock::validate {

// Valid UTF-8 passes through; control characters, DEL and bytes that are not
// valid UTF-8 become \xNN, and (with escape_quotes) '"' and '\\' become \" and
// \\; longer than max_bytes is cut at a character boundary and ends with "...".
std::string printable(std::string_view s, size_t max_bytes = 80, bool escape_quotes = true);

// printable(s) in double quotes (not named quoted: ADL would find std::quoted).
std::string in_quotes(std::string_view s, size_t max_bytes = 80);

// Every run of white space (space, tab, CR, LF, FF, VT) as one space, none at
// either end: how PDF text is compared.
std::string collapse_space(std::string_view s);

// Cuts s to at most max_bytes at a UTF-8 character boundary, adding "..." if cut.
std::string truncate_utf8(std::string s, size_t max_bytes);

}  // namespace airlock::validate
