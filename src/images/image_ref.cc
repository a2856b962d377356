#include "images/image_ref.h"

#include "base/terminal_text.h"

namespace airlock::images {
namespace {

constexpr size_t kMaxName = 63;
constexpr std::string_view kSha256Prefix = "sha256:";

bool name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool name_char(char c) { return name_start(c) || c == '.' || c == '_' || c == '-'; }
bool hex_char(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

// Untrusted text goes into error messages quoted and inert.
std::string shown(std::string_view text) {
  return "'" + quoted_text(text.substr(0, 80)) +
         (text.size() > 80 ? "...'" : "'");
}

}  // namespace

Status check_image_name(std::string_view name) {
  if (name.empty()) return fail("image name is empty");
  if (name.size() > kMaxName)
    return fail("image name " + shown(name) + " is longer than 63 characters");
  if (!name_start(name[0]))
    return fail("image name " + shown(name) + " must start with a lower-case letter or a digit");
  for (char c : name)
    if (!name_char(c))
      return fail("image name " + shown(name) +
                  " may contain only lower-case letters, digits, '.', '_' and '-'");
  return {};
}

bool is_image_digest(std::string_view digest) {
  if (!digest.starts_with(kSha256Prefix)) return false;
  digest.remove_prefix(kSha256Prefix.size());
  if (digest.size() != 64) return false;
  for (char c : digest)
    if (!hex_char(c)) return false;
  return true;
}

std::string digest_hex(std::string_view digest) {
  return std::string(digest.substr(kSha256Prefix.size()));
}

Result<ImageRef> parse_image_ref(std::string_view text) {
  ImageRef ref;
  size_t at = text.find('@');
  ref.name = std::string(text.substr(0, at));
  if (auto st = check_image_name(ref.name); !st) return std::unexpected(st.error());
  if (at == std::string_view::npos) return ref;
  std::string_view digest = text.substr(at + 1);
  if (!is_image_digest(digest))
    return fail("image digest " + shown(digest) +
                " is not 'sha256:' followed by 64 lower-case hex digits");
  if (ref.name == kHostImage)
    return fail("the 'host' image is the machine's own /usr: it cannot be pinned to a digest");
  ref.digest = std::string(digest);
  return ref;
}

std::string format_image_ref(const ImageRef& ref) {
  return ref.digest.empty() ? ref.name : ref.name + "@" + ref.digest;
}

}  // namespace airlock::images
