// HTTP requests as airlock serve reads them (src/http/connection.cc): a
// Beast request parser with the server's header limit, then the target
// (parse_target: path, segments, query), the route lookup on the service's
// real routes (the paths of docs/openapi.json), the header map and the body
// with the default body limit.
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

#include "http/routing.h"
#include "http/server.h"
#include "fuzz/fuzz.h"
#include "api/routes.h"

namespace {

namespace http = boost::beast::http;
using airlock::api::RouteTable;

const RouteTable& service_routes() {
  static const RouteTable table = [] {
    RouteTable t;
    auto doc = nlohmann::json::parse(airlock::service::openapi_document());
    for (const auto& [pattern, methods] : doc["paths"].items()) {
      for (const auto& [method, unused] : methods.items()) {
        std::string upper;
        for (char c : method) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        AIRLOCK_CHECK(t.add(upper, pattern).has_value());
      }
    }
    return t;
  }();
  return table;
}

// Feeds `in` to the parser until it is done, wants more or fails; the bytes it used.
template <class Parser>
size_t feed(Parser& parser, std::string_view in, boost::beast::error_code& ec) {
  size_t used = 0;
  while (used < in.size() && !parser.is_done()) {
    size_t n = parser.put(boost::asio::buffer(in.data() + used, in.size() - used), ec);
    used += n;
    if (ec || n == 0) break;
  }
  return used;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in = airlock::fuzz::text(data, size);
  airlock::api::ServerOptions defaults;
  airlock::api::RouteOptions route;  // the JSON routes' body limit
  http::request_parser<http::empty_body> header;
  header.header_limit(static_cast<uint32_t>(defaults.max_header_bytes));
  header.body_limit(std::numeric_limits<uint64_t>::max());
  header.eager(false);
  boost::beast::error_code ec;
  size_t used = feed(header, in, ec);
  if (ec || !header.is_header_done()) return 0;

  auto& req = header.get();
  std::string_view target(req.target().data(), req.target().size());
  (void)airlock::api::loggable(target.substr(0, target.find('?')));
  auto parsed = airlock::api::parse_target(target);
  if (!parsed) return 0;
  for (const auto& segment : parsed->segments) {
    AIRLOCK_CHECK(segment.find('/') == std::string::npos);
  }
  auto found = service_routes().find(std::string(req.method_string()), parsed->segments);
  airlock::api::HttpRequest request;
  for (const auto& field : req) {
    std::string name(field.name_string());
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    auto [it, inserted] = request.headers.emplace(name, std::string(field.value()));
    if (!inserted) it->second += ", " + std::string(field.value());
  }
  if (found.outcome != RouteTable::Outcome::kFound) return 0;

  http::request_parser<http::string_body> body(std::move(header));
  body.body_limit(route.max_body_bytes);
  feed(body, in.substr(used), ec);
  if (!ec && body.is_done()) AIRLOCK_CHECK(body.get().body().size() <= route.max_body_bytes);
  return 0;
}
