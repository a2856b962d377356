// File names coming from users or from the sandbox are data. These decide
// which names are acceptable and how to show any name safely.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace airlock::workspace {

// One path component: 1..128 bytes of [A-Za-z0-9._+-] and space, not
// starting with '.' or '-' or space. Returns the reason when refused.
std::optional<std::string> check_component(std::string_view name);

// A '/'-separated relative path (at most 1024 bytes, no leading, trailing or
// doubled '/') whose every component passes check_component.
std::optional<std::string> check_relative_path(std::string_view path);

// The same rules for names inside a workspace (a session's files, a
// snapshot), where a name may also start with '.' (.local, .git, .cache);
// "." and ".." stay refused.
std::optional<std::string> check_workspace_component(std::string_view name);
std::optional<std::string> check_workspace_path(std::string_view path);

// Printable, valid UTF-8 rendering of arbitrary bytes for records and
// messages: printable ASCII stays, everything else (and '\\', so the form is
// unambiguous) becomes \xNN; the rendering is cut at 300 bytes with "...".
std::string printable(std::string_view raw);

}  // namespace airlock::workspace
