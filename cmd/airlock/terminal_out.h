// What the CLI prints that a job or the service chose: shown inert when it
// goes to a terminal (base/terminal_text.h), unchanged when it goes to a
// file or a pipe.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace airlock::cli {

// Writes `text` to `fd`, through terminal_safe() when `fd` is a terminal.
void write_shown(int fd, std::string_view text);

// `j` as indented JSON; for a terminal every character outside printable
// ASCII is a \u escape (the same document, nothing a terminal acts on).
std::string json_shown(int fd, const nlohmann::json& j);

}  // namespace airlock::cli
