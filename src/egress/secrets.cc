#include "egress/secrets.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <sstream>

#include "base/nesting.h"
#include "base/toml_parse.h"
#include "base/unique_fd.h"
#include "sys/file_io.h"

namespace airlock::egress {
namespace {

bool header_token(std::string_view s) {
  return !s.empty() && s.size() <= 64 &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isalnum(c) || c == '-' || c == '_'; });
}

}  // namespace

bool valid_secret_name(std::string_view name) {
  return !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '_' || c == '.' || c == '-';
  });
}

Result<Secrets> parse_secrets(std::string_view text) {
  if (!nesting_within(text, kMaxConfigDepth, NestingSyntax::kToml))
    return fail("secrets file: nested deeper than " + std::to_string(kMaxConfigDepth) + " levels");
  toml::value root;
  try {
    std::istringstream in{std::string(text)};
    root = toml::parse(in, "secrets");
  } catch (const std::exception&) {
    // toml11's message quotes the offending line, which may hold a value.
    return fail("secrets file: not valid TOML");
  }
  Secrets out;
  for (const auto& [name, table] : root.as_table()) {
    std::string at = "secrets file: [" + name + "]";
    if (!valid_secret_name(name)) return fail("secrets file: a secret name must be [A-Za-z0-9_.-], at most 64 bytes");
    if (!table.is_table()) return fail(at + " must be a table");
    Credential c{"Authorization", ""};
    for (const auto& [key, value] : table.as_table()) {
      if (key != "value" && key != "header") return fail(at + ": unknown key '" + key + "'");
      if (!value.is_string()) return fail(at + "." + key + " must be a string");
      (key == "value" ? c.value : c.header) = value.as_string().str;
    }
    if (c.value.empty()) return fail(at + ".value is required");
    if (!header_token(c.header)) return fail(at + ".header must be a header name");
    if (std::any_of(c.value.begin(), c.value.end(), [](unsigned char ch) { return ch < 0x20 || ch == 0x7f; }))
      return fail(at + ".value must not hold control characters");
    out.emplace(name, std::move(c));
  }
  return out;
}

Result<Secrets> load_secrets(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) return fail_errno("open the secrets file " + path);
  struct stat st{};
  if (::fstat(fd.get(), &st) < 0) return fail_errno("stat the secrets file " + path);
  if (!S_ISREG(st.st_mode)) return fail("the secrets file " + path + " is not a regular file");
  if (st.st_uid != 0 || (st.st_mode & 077) != 0)
    return fail("the secrets file " + path + " must be owned by root with mode 0600 or 0400");
  auto text = sys::read_all(fd.get(), 1 << 20);
  if (!text) return fail_with("read the secrets file " + path, text.error().err);
  return parse_secrets(*text);
}

}  // namespace airlock::egress
