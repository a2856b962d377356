// What a job or session asks for: an image by name, optionally pinned to a
// digest ("python-data" or "python-data@sha256:<64 hex>"). Pure parsing.
#pragma once

#include <string>
#include <string_view>

#include "base/result.h"

namespace airlock::images {

// The built-in image: the host's own /usr, unpinned. Never in the store.
inline constexpr std::string_view kHostImage = "host";

struct ImageRef {
  std::string name;
  std::string digest;  // "sha256:<64 hex>", or "" when not pinned
};

// "NAME" or "NAME@sha256:<64 lower-case hex>"; a clear error otherwise.
// "host" parses (unpinned only); the store refuses it.
[[nodiscard]] Result<ImageRef> parse_image_ref(std::string_view text);

// Names: [a-z0-9][a-z0-9._-]{0,62}. The error says what is wrong.
[[nodiscard]] Status check_image_name(std::string_view name);
// "sha256:" followed by 64 lower-case hex digits.
[[nodiscard]] bool is_image_digest(std::string_view digest);
// The 64 hex digits of a valid digest (the file names in the store).
[[nodiscard]] std::string digest_hex(std::string_view digest);

// "NAME" or "NAME@DIGEST".
[[nodiscard]] std::string format_image_ref(const ImageRef& ref);

}  // namespace airlock::images
