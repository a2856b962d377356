// The OpenAPI document served at /openapi.json (docs/openapi.json) documents
// every route the service registers: a new route without a path + method
// entry fails here. kRoutes lists the routes of src/api/job_routes.cc,
// src/api/session_routes.cc, src/api/pool_routes.cc and src/api/usage_routes.cc; a second test
// reads those files and
// checks the list is complete, so a route added there and not here fails too.
#include "api/routes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "jobs/run_request.h"
#include "workspace/file_type.h"

namespace {

using Route = std::pair<std::string, std::string>;  // method, pattern

const std::set<Route> kRoutes = {
    // src/api/job_routes.cc
    {"GET", "/healthz"},
    {"GET", "/metrics"},
    {"GET", "/openapi.json"},
    {"POST", "/v1/files"},
    {"POST", "/v1/jobs"},
    {"GET", "/v1/jobs"},
    {"GET", "/v1/jobs/{id}"},
    {"POST", "/v1/jobs/{id}/cancel"},
    {"POST", "/v1/jobs/{id}/requests/{request_id}/refuse"},
    {"GET", "/v1/jobs/{id}/events"},
    {"GET", "/v1/jobs/{id}/outputs/{name}"},
    {"POST", "/v1/jobs/{id}/outputs/{name}/publish"},
    {"POST", "/v1/admin/retention"},
    // src/api/usage_routes.cc
    {"GET", "/v1/usage"},
    // src/api/session_routes.cc
    {"POST", "/v1/sessions"},
    {"GET", "/v1/sessions"},
    {"GET", "/v1/sessions/{id}"},
    {"DELETE", "/v1/sessions/{id}"},
    {"POST", "/v1/sessions/{id}/interrupt"},
    {"POST", "/v1/sessions/{id}/restart"},
    {"POST", "/v1/sessions/{id}/requests/{request_id}/refuse"},
    {"POST", "/v1/sessions/{id}/execs"},
    {"GET", "/v1/sessions/{id}/execs"},
    {"GET", "/v1/sessions/{id}/execs/{exec}"},
    {"GET", "/v1/sessions/{id}/execs/{exec}/events"},
    {"PUT", "/v1/sessions/{id}/files"},
    {"GET", "/v1/sessions/{id}/files"},
    {"GET", "/v1/sessions/{id}/files/content"},
    {"DELETE", "/v1/sessions/{id}/files"},
    {"POST", "/v1/sessions/{id}/snapshots"},
    {"GET", "/v1/snapshots"},
    {"GET", "/v1/snapshots/{digest}"},
    {"DELETE", "/v1/snapshots/{digest}"},
    // src/api/pool_routes.cc (the /ui/ files of ui_routes.cc are not the API)
    {"GET", "/v1/pools"},
};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

nlohmann::json document() {
  auto doc = nlohmann::json::parse(airlock::service::openapi_document(), nullptr, false);
  EXPECT_FALSE(doc.is_discarded()) << "the served OpenAPI document is not JSON";
  return doc;
}

TEST(OpenApiDocument, IsOpenApi31) {
  auto doc = document();
  ASSERT_TRUE(doc.is_object());
  EXPECT_EQ(doc["openapi"], "3.1.0");
  ASSERT_TRUE(doc.contains("paths"));
}

TEST(OpenApiDocument, DocumentsEveryRegisteredRoute) {
  auto doc = document();
  ASSERT_TRUE(doc.is_object());
  const auto& paths = doc["paths"];
  for (const auto& [method, pattern] : kRoutes) {
    ASSERT_TRUE(paths.contains(pattern)) << "docs/openapi.json has no path " << pattern;
    EXPECT_TRUE(paths[pattern].contains(lower(method)))
        << "docs/openapi.json has no " << method << " for " << pattern;
  }
}

TEST(OpenApiDocument, DocumentsNoRouteThatDoesNotExist) {
  auto doc = document();
  ASSERT_TRUE(doc.is_object());
  for (const auto& [pattern, ops] : doc["paths"].items())
    for (const auto& [method, op] : ops.items()) {
      std::string upper = method;
      std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
      EXPECT_TRUE(kRoutes.count({upper, pattern})) << "docs/openapi.json documents " << upper << " " << pattern
                                                   << ", which no route serves";
    }
}

TEST(OpenApiDocument, EveryPathParameterIsDeclared) {
  auto doc = document();
  ASSERT_TRUE(doc.is_object());
  static const std::regex param(R"(\{([A-Za-z_]+)\})");
  for (const auto& [pattern, ops] : doc["paths"].items())
    for (const auto& [method, op] : ops.items())
      for (std::sregex_iterator it(pattern.begin(), pattern.end(), param), end; it != end; ++it) {
        std::string name = (*it)[1];
        bool declared = false;
        for (const auto& p : op.value("parameters", nlohmann::json::array()))
          declared |= p.value("name", "") == name && p.value("in", "") == "path";
        EXPECT_TRUE(declared) << method << " " << pattern << " does not declare the path parameter " << name;
      }
}

// Policy.outputs.types lists exactly the output types a job's policy may name:
// the file types airlock detects, but binary (never accepted by name).
TEST(OpenApiDocument, OutputTypesAreTheOnesAPolicyAccepts) {
  auto doc = document();
  ASSERT_TRUE(doc.is_object());
  const auto& items = doc["components"]["schemas"]["Policy"]["properties"]["outputs"]["properties"]["types"]["items"];
  ASSERT_TRUE(items.contains("enum")) << items.dump();
  std::set<std::string> documented;
  for (const auto& t : items["enum"]) documented.insert(t.get<std::string>());
  std::set<std::string> accepted;
  for (int t = 0; t <= static_cast<int>(airlock::workspace::FileType::kBinary); ++t) {
    std::string name(airlock::workspace::type_name(static_cast<airlock::workspace::FileType>(t)));
    if (airlock::jobs::parse_type_list(name)) accepted.insert(name);
  }
  EXPECT_TRUE(accepted.count("archive")) << "the list below would not see a type it cannot name";
  EXPECT_EQ(documented, accepted);
  for (const auto& name : documented) EXPECT_TRUE(airlock::jobs::parse_type_list(name)) << name;
}

// The route files, found from this file's path (src/api/).
std::filesystem::path source_dir() { return std::filesystem::path(AIRLOCK_SOURCE_DIR) / "src" / "api"; }

TEST(OpenApiDocument, RouteListMatchesTheRouteSources) {
  auto dir = source_dir();
  if (dir.empty() || !std::filesystem::exists(dir / "job_routes.cc"))
    GTEST_SKIP() << "the sources are not where this test was compiled from";
  std::set<Route> found;
  // server.route("GET", "/healthz", ...) and add(server, service, "POST", "/v1/jobs", ...)
  static const std::regex route(R"re("(GET|POST|PUT|DELETE|PATCH|HEAD)",\s*"(/[^"]*)")re");
  for (const char* file : {"job_routes.cc", "session_routes.cc", "pool_routes.cc", "usage_routes.cc"}) {
    std::ifstream in(dir / file);
    ASSERT_TRUE(in) << "cannot read " << (dir / file);
    std::stringstream text;
    text << in.rdbuf();
    std::string s = text.str();
    for (std::sregex_iterator it(s.begin(), s.end(), route), end; it != end; ++it)
      found.insert({(*it)[1], (*it)[2]});
  }
  for (const auto& r : found)
    EXPECT_TRUE(kRoutes.count(r)) << r.first << " " << r.second
                                  << " is registered but not listed here (document it in docs/openapi.json)";
  for (const auto& r : kRoutes)
    EXPECT_TRUE(found.count(r)) << r.first << " " << r.second << " is listed here but no longer registered";
}

}  // namespace
