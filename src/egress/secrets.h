// Credentials the gateway adds to requests (docs/egress.md). They come from a
// root-only file named by the operator (`airlock run --secrets-file`, or the
// service's `secrets_file`), never from a job request; a rule names a secret,
// and only the name is ever recorded or logged.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "base/result.h"
#include "egress/proxy_request.h"

namespace airlock::egress {

using Secrets = std::map<std::string, Credential>;  // name -> header and value

// TOML, one table a secret:
//   [github]
//   value = "Bearer ghp_..."       # the whole header value
//   header = "Authorization"       # optional, default Authorization
// Pure; errors name the secret, never print a value.
Result<Secrets> parse_secrets(std::string_view toml_text);

// Reads `path` (no symlink) and refuses it unless it is a regular file owned
// by root and not readable or writable by group or others.
Result<Secrets> load_secrets(const std::string& path);

// [A-Za-z0-9_.-]{1,64}: what a rule may name.
bool valid_secret_name(std::string_view name);

}  // namespace airlock::egress
