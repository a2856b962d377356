// The Debian mirror the host's apt uses, as apt itself sees it: the
// repositories of `apt-get indextargets` whose Release file says
// "Origin: Debian" (deb822 .sources and one-line .list files alike), turned
// into sources.list lines for the recipe's suite.
#pragma once

#include <string>
#include <string_view>

#include "base/result.h"

namespace airlock::images {

// The --format of the indextargets query whose output `debian_sources` reads.
inline constexpr std::string_view kIndexTargetsFormat =
    "$(REPO_URI)\t$(RELEASE)\t$(ORIGIN)\t$(COMPONENT)";

// Pure: from that output, one "deb URI SUITE COMPONENTS" line per Debian
// repository, with the host's codename replaced by `suite` and its suffix
// kept (bookworm-updates -> SUITE-updates, bookworm-security -> SUITE-security).
// An error when the host's apt has no Debian repository.
[[nodiscard]] Result<std::string> debian_sources(std::string_view indextargets,
                                                 std::string_view suite);

// Runs `apt-get indextargets` on the host and applies debian_sources.
[[nodiscard]] Result<std::string> host_debian_sources(std::string_view suite);

}  // namespace airlock::images
