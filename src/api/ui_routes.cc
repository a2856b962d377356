#include "api/ui_routes.h"

#include <memory>
#include <string>
#include <utility>

#include "api/ui_assets.h"

namespace airlock::service {

namespace {

api::HttpResponse with_ui_headers(api::HttpResponse r) {
  for (auto& h : ui_security_headers()) r.headers.push_back(std::move(h));
  return r;
}

api::HttpResponse serve_asset(const std::string& name) {
  const UiAsset* asset = find_ui_asset(name);
  if (!asset)
    return with_ui_headers(
        api::HttpResponse::error(404, "not_found", "no such file of the dashboard"));
  api::HttpResponse r;
  r.body = std::string(asset->content);
  r.headers.emplace_back("Content-Type", std::string(ui_content_type(asset->name)));
  return with_ui_headers(std::move(r));
}

}  // namespace

void install_ui_routes(api::HttpServer& server) {
  server.route("GET", "/ui", [](std::shared_ptr<api::Exchange> ex) {
    api::HttpResponse r;
    r.status = 308;
    r.headers.emplace_back("Location", "/ui/");
    ex->respond(with_ui_headers(std::move(r)));
  });
  server.route("GET", "/ui/",
               [](std::shared_ptr<api::Exchange> ex) { ex->respond(serve_asset("")); });
  server.route("GET", "/ui/{file}", [](std::shared_ptr<api::Exchange> ex) {
    ex->respond(serve_asset(ex->request().params.at("file")));
  });
}

}  // namespace airlock::service
