// Sessions on a stored image through the API, with the preloaded pool on:
// the service starts the image's preloaded interpreter for the first session
// on it (src/sessions/session_image_zygotes.cc) and the session starts from
// it, pandas imported. Skipped, saying why, when python-data is not built
// from its current recipe in $AIRLOCK_WORKLOAD_IMAGE_DIR.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "images/recipe.h"
#include "run_helpers.h"
#include "service_fixture.h"

namespace airlock::testing {
namespace {

using json = nlohmann::json;

// The store holding python-data built from images/python-data.toml, or "" with `why`.
std::string python_data_store(std::string& why) {
  const char* dir = std::getenv("AIRLOCK_WORKLOAD_IMAGE_DIR");
  if (!dir || !*dir) {
    why = "AIRLOCK_WORKLOAD_IMAGE_DIR is not set (scripts/build-images.sh STORE python-data builds it)";
    return "";
  }
  std::string store = dir;
  std::string name = read_text(store + "/names/python-data");
  json manifest = name.rfind("sha256:", 0) == 0
                      ? json::parse(read_text(store + "/manifests/" + name.substr(7, 64) + ".json"), nullptr, false)
                      : json();
  auto recipe = images::load_recipe(std::string(AIRLOCK_SOURCE_DIR) + "/images/python-data.toml");
  if (!recipe || !manifest.is_object() || manifest.value("recipe_digest", "") != images::recipe_digest(*recipe)) {
    why = "python-data in " + store + " is missing or was built from another recipe (scripts/build-images.sh " +
          store + " python-data)";
    return "";
  }
  return store;
}

TEST(ImageSessionApi, ASessionOnPythonDataStartsPreloadedWithPandasImported) {
  std::string why;
  std::string store = python_data_store(why);
  if (store.empty()) GTEST_SKIP() << why;
  TempDir config;
  std::string file = config.sub("serve.toml");
  write_text(file, "image_dir = \"" + store + "\"\n");
  ServiceProcess svc({"--config", file, "--preloaded", "1"});
  HttpClient http{svc.port()};
  for (int i = 0; i < 2; ++i) {  // the first starts the image's interpreter, the second finds it
    auto r = http.request("POST", "/v1/sessions", json({{"image", "python-data"}}).dump(), svc.alpha.auth());
    ASSERT_EQ(r.status, 201) << r.body << "\n" << svc.log();
    json v = r.json();
    EXPECT_EQ(v["start"], "preloaded") << v.dump();
    std::string sid = v["id"];
    json body = {{"code", "import sys\n'pandas' in sys.modules and 'matplotlib.pyplot' in sys.modules"},
                 {"wait_s", 120}};
    auto e = http.request("POST", "/v1/sessions/" + sid + "/execs", body.dump(), svc.alpha.auth());
    ASSERT_EQ(e.status, 201) << e.body;
    EXPECT_EQ(e.json()["result"]["value"], "True") << e.body;
    EXPECT_EQ(http.request("DELETE", "/v1/sessions/" + sid, "", svc.alpha.auth()).status, 200);
  }
}

}  // namespace
}  // namespace airlock::testing
