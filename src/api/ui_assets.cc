#include "api/ui_assets.h"

namespace airlock::service {

const UiAsset* find_ui_asset(std::string_view name) {
  if (name.empty()) name = "index.html";
  for (const auto& asset : ui_assets())
    if (asset.name == name) return &asset;
  return nullptr;
}

std::string_view ui_content_type(std::string_view name) {
  if (name.ends_with(".html")) return "text/html; charset=utf-8";
  if (name.ends_with(".js")) return "text/javascript; charset=utf-8";
  if (name.ends_with(".css")) return "text/css; charset=utf-8";
  return "application/octet-stream";
}

std::vector<std::pair<std::string, std::string>> ui_security_headers() {
  return {{"Content-Security-Policy", std::string(kUiContentSecurityPolicy)},
          {"X-Content-Type-Options", "nosniff"},
          {"X-Frame-Options", "DENY"},
          {"Referrer-Policy", "no-referrer"},
          {"Cross-Origin-Opener-Policy", "same-origin"},
          {"Cross-Origin-Resource-Policy", "same-origin"},
          {"Cache-Control", "no-cache"}};
}

}  // namespace airlock::service
