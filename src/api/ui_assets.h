// The dashboard's files (ui/ of the repository), compiled into the binary by
// ui/ui.cmake, and what every response that serves one carries. Pure: a table
// and lookups, unit-tested in tests/unit/ui_assets_test.cc.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace airlock::service {

struct UiAsset {
  std::string_view name;  // "app.js": a file name of ui/, no directory
  std::string_view content;
};

// Every file of ui/ (generated: generated/ui_assets_data.cc).
std::span<const UiAsset> ui_assets();

// The asset a path segment of /ui/ names ("" is index.html); nullptr for
// anything else, so a request can only ever reach a compiled-in file.
const UiAsset* find_ui_asset(std::string_view name);

// By extension: .html, .js, .css (the only kinds ui.cmake embeds).
std::string_view ui_content_type(std::string_view name);

// The Content-Security-Policy of every /ui/ response: scripts, styles and
// connections only from this origin, no inline script or style, no plugins,
// no framing; images also from blob: (downloaded figures) and data:.
inline constexpr std::string_view kUiContentSecurityPolicy =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors "
    "'none'";

// CSP, nosniff, no referrer, no caching, no framing (for browsers without CSP 2).
std::vector<std::pair<std::string, std::string>> ui_security_headers();

}  // namespace airlock::service
