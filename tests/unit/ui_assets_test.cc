// The dashboard's compiled-in files (ui/, embedded by ui/ui.cmake) and the
// rules they keep: only embedded files are reachable, every one has its
// content type, the page has no inline script or style and loads nothing
// from another origin, and no script builds HTML from strings (job output
// must stay text: docs/dashboard.md).
#include "api/ui_assets.h"

#include <gtest/gtest.h>

#include <regex>
#include <string>

namespace {

using airlock::service::find_ui_asset;
using airlock::service::ui_assets;
using airlock::service::ui_content_type;

TEST(UiAssets, IndexIsTheDefaultAndEveryPageModuleIsEmbedded) {
  const auto* index = find_ui_asset("");
  ASSERT_NE(index, nullptr);
  EXPECT_EQ(index->name, "index.html");
  for (const char* name :
       {"app.js", "api.js", "dom.js", "text.js", "sse.js", "style.css", "page_jobs.js",
        "page_job.js", "page_sessions.js", "page_snapshots.js", "page_usage.js", "page_health.js"})
    EXPECT_NE(find_ui_asset(name), nullptr) << name;
}

TEST(UiAssets, OnlyEmbeddedNamesAreFound) {
  for (const char* name : {"..", "../index.html", "/etc/passwd", "index.html/", "INDEX.HTML",
                           "app.js.map", "index.html%00", "ui.cmake"})
    EXPECT_EQ(find_ui_asset(name), nullptr) << name;
}

TEST(UiAssets, ContentTypesByExtension) {
  EXPECT_EQ(ui_content_type("index.html"), "text/html; charset=utf-8");
  EXPECT_EQ(ui_content_type("app.js"), "text/javascript; charset=utf-8");
  EXPECT_EQ(ui_content_type("style.css"), "text/css; charset=utf-8");
  EXPECT_EQ(ui_content_type("x.svg"), "application/octet-stream");
  for (const auto& a : ui_assets())
    EXPECT_NE(ui_content_type(a.name), "application/octet-stream") << a.name;
}

TEST(UiAssets, PageHasNoInlineScriptStyleOrHandlers) {
  std::string html(find_ui_asset("index.html")->content);
  // Every <script> has a src; no <style> element, style= or on...= attribute.
  std::regex script_tag("<script\\b[^>]*>", std::regex::icase);
  int scripts = 0;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), script_tag);
       it != std::sregex_iterator(); ++it) {
    ++scripts;
    EXPECT_NE(it->str().find(" src="), std::string::npos) << it->str();
  }
  EXPECT_EQ(scripts, 1);
  EXPECT_FALSE(std::regex_search(html, std::regex("<style\\b", std::regex::icase)));
  EXPECT_FALSE(std::regex_search(html, std::regex("\\sstyle\\s*=", std::regex::icase)));
  EXPECT_FALSE(std::regex_search(html, std::regex("\\son[a-z]+\\s*=", std::regex::icase)));
}

TEST(UiAssets, NothingLoadsFromAnotherOrigin) {
  std::regex external("(https?:)?//[a-z0-9.-]+\\.[a-z]{2,}", std::regex::icase);
  std::regex css_loads("@import|url\\(", std::regex::icase);
  for (const auto& a : ui_assets()) {
    std::string text(a.content);
    EXPECT_FALSE(std::regex_search(text, external)) << a.name << " names another origin";
    if (a.name.ends_with(".css")) {
      EXPECT_FALSE(std::regex_search(text, css_loads)) << a.name << " loads a resource";
    }
  }
}

TEST(UiAssets, NoScriptTurnsStringsIntoHtml) {
  std::regex sinks(
      "\\.innerHTML|\\.outerHTML|insertAdjacentHTML|document\\.write|\\beval\\(|new Function\\(|"
      "setAttribute\\(\\s*['\"](on|style|src)|createContextualFragment|DOMParser");
  for (const auto& a : ui_assets()) {
    if (!a.name.ends_with(".js")) continue;
    std::string text(a.content);
    std::smatch m;
    EXPECT_FALSE(std::regex_search(text, m, sinks)) << a.name << ": " << m.str();
  }
}

TEST(UiAssets, SecurityHeadersCarryAStrictPolicy) {
  auto headers = airlock::service::ui_security_headers();
  std::string csp, nosniff;
  for (const auto& [k, v] : headers) {
    if (k == "Content-Security-Policy") csp = v;
    if (k == "X-Content-Type-Options") nosniff = v;
  }
  EXPECT_NE(csp.find("default-src 'self'"), std::string::npos);
  EXPECT_NE(csp.find("frame-ancestors 'none'"), std::string::npos);
  EXPECT_EQ(csp.find("unsafe-inline"), std::string::npos);
  EXPECT_EQ(csp.find("unsafe-eval"), std::string::npos);
  EXPECT_EQ(nosniff, "nosniff");
}

}  // namespace
