#include <gtest/gtest.h>

#include <map>

#include "images/recipe.h"

using namespace airlock;
using namespace airlock::images;

namespace {

const char* kMinimal = R"(
name = "minimal"
description = "for tests"
suite = "bookworm"
packages = ["python3", "python3-pandas"]
smoke = "python3 -c 'import pandas'"
[env]
LANG = "C.UTF-8"
[[files]]
path = "/etc/airlock/hello"
content = "hi\n"
[[files]]
path = "/usr/local/bin/tool"
source = "files/tool.sh"
mode = "0755"
)";

SourceReader files(std::map<std::string, std::string> contents) {
  return [contents](const std::string& path) -> Result<std::string> {
    auto it = contents.find(path);
    if (it == contents.end()) return fail_with("open " + path, ENOENT);
    return it->second;
  };
}

Result<Recipe> parse(const std::string& text) {
  return parse_recipe(text, "test.toml", files({{"files/tool.sh", "#!/bin/sh\necho tool\n"}}));
}

void expect_error(const std::string& text, const std::string& reason) {
  auto r = parse(text);
  ASSERT_FALSE(r) << text;
  EXPECT_NE(r.error().what.find(reason), std::string::npos) << r.error().what;
  EXPECT_NE(r.error().what.find("recipe test.toml"), std::string::npos) << r.error().what;
}

const std::string kBase = "name = \"x\"\nsuite = \"bookworm\"\nsmoke = \"true\"\n";

}  // namespace

TEST(Recipe, ParsesEveryField) {
  auto r = parse(kMinimal);
  ASSERT_TRUE(r) << r.error().what;
  EXPECT_EQ(r->name, "minimal");
  EXPECT_EQ(r->suite, "bookworm");
  EXPECT_EQ(r->variant, "minbase");
  EXPECT_EQ(r->packages, (std::vector<std::string>{"python3", "python3-pandas"}));
  EXPECT_EQ(r->env.at("LANG"), "C.UTF-8");
  ASSERT_EQ(r->files.size(), 2u);
  EXPECT_EQ(r->files[0].path, "/etc/airlock/hello");
  EXPECT_EQ(r->files[0].content, "hi\n");
  EXPECT_EQ(r->files[0].mode, 0644);
  EXPECT_EQ(r->files[1].content, "#!/bin/sh\necho tool\n");
  EXPECT_EQ(r->files[1].source, "files/tool.sh");
  EXPECT_EQ(r->files[1].mode, 0755);
  EXPECT_EQ(r->smoke, "python3 -c 'import pandas'");
}

TEST(Recipe, DigestIsOverContentNotLayout) {
  auto a = parse(kMinimal);
  ASSERT_TRUE(a);
  // Same content, other order, other description and name, comments: same digest.
  auto b = parse(R"(# reordered
smoke = "python3 -c 'import pandas'"
packages = ["python3-pandas", "python3"]
suite = "bookworm"
name = "other"
[[files]]
path = "/usr/local/bin/tool"
source = "files/tool.sh"
mode = "755"
[[files]]
path = "/etc/airlock/hello"
content = "hi\n"
[env]
LANG = "C.UTF-8"
)");
  ASSERT_TRUE(b) << b.error().what;
  EXPECT_EQ(recipe_digest(*a), recipe_digest(*b));
  EXPECT_TRUE(recipe_digest(*a).starts_with("sha256:"));

  // Any change to what is built changes it, including an extra file's bytes.
  auto c =
      parse_recipe(kMinimal, "test.toml", files({{"files/tool.sh", "#!/bin/sh\necho other\n"}}));
  ASSERT_TRUE(c);
  EXPECT_NE(recipe_digest(*a), recipe_digest(*c));
  Recipe d = *a;
  d.packages.push_back("zstd");
  EXPECT_NE(recipe_digest(*a), recipe_digest(d));
  d = *a;
  d.env["LANG"] = "C";
  EXPECT_NE(recipe_digest(*a), recipe_digest(d));
  d = *a;
  d.smoke = "true";
  EXPECT_NE(recipe_digest(*a), recipe_digest(d));
  d = *a;
  d.path_exclude = {"/usr/include/*"};
  EXPECT_NE(recipe_digest(*a), recipe_digest(d));
  // How airlock builds is part of it too.
  EXPECT_NE(recipe_canonical(*a).find("\"builder\":" + std::to_string(kBuilderVersion)),
            std::string::npos);
}

TEST(Recipe, ClearErrors) {
  expect_error(kBase + "packages = [\"a1\"]\ncolour = \"red\"\n", "unknown key 'colour'");
  expect_error(kBase + "packages = []\n", "'packages' is empty");
  expect_error(kBase, "'packages' is required");
  expect_error(kBase + "packages = \"python3\"\n", "must be an array");
  expect_error(kBase + "packages = [\"Python3\"]\n", "'Python3' is not a Debian package name");
  expect_error(kBase + "packages = [\"python3;rm\"]\n", "is not a Debian package name");
  expect_error(kBase + "packages = [\"-o\"]\n", "is not a Debian package name");
  expect_error(kBase + "packages = [\"a1\", \"a1\"]\n", "listed twice");
  expect_error(kBase + "packages = [3]\n", "must be a string");
  expect_error("name = \"Bad Name\"\nsuite = \"bookworm\"\nsmoke = \"true\"\npackages = [\"a1\"]\n",
               "image name 'Bad Name'");
  expect_error("name = \"host\"\nsuite = \"bookworm\"\nsmoke = \"true\"\npackages = [\"a1\"]\n",
               "reserved");
  expect_error("suite = \"bookworm\"\nsmoke = \"true\"\npackages = [\"a1\"]\n",
               "'name' is required");
  expect_error("name = \"x\"\nsuite = \"../etc\"\nsmoke = \"true\"\npackages = [\"a1\"]\n",
               "not a Debian suite name");
  expect_error("name = \"x\"\nsuite = \"bookworm\"\nsmoke = \"  \"\npackages = [\"a1\"]\n",
               "'smoke' is empty");
  expect_error(kBase + "packages = [\"a1\"]\nvariant = \"standard\"\n", "'variant' must be");
  expect_error(kBase + "packages = [\"a1\"]\n[env]\n\"A-B\" = \"x\"\n", "env name 'A-B'");
  expect_error(kBase + "packages = [\"a1\"]\n[env]\nA = 1\n", "env.A must be a string");
  expect_error(kBase + "packages = [\"a1\"\n", "not valid TOML");
  expect_error(kBase + "packages = [\"a1\"]\npath_exclude = [\"usr/include\"]\n",
               "path_exclude 'usr/include'");
  expect_error(kBase + "packages = [\"a1\"]\npath_exclude = [\"/a b\"]\n", "without spaces");
  expect_error(kBase + "packages = [\"a1\"]\n" + std::string(100, '[') + std::string(100, ']'),
               "nested deeper");
}

TEST(Recipe, ExtraFileErrors) {
  std::string base = kBase + "packages = [\"a1\"]\n[[files]]\n";
  expect_error(base + "content = \"x\"\n", "needs a 'path'");
  expect_error(base + "path = \"etc/x\"\ncontent = \"x\"\n", "must be absolute and normalized");
  expect_error(base + "path = \"/etc/../x\"\ncontent = \"x\"\n", "must be absolute and normalized");
  expect_error(base + "path = \"/proc/x\"\ncontent = \"x\"\n", "outside /proc");
  expect_error(base + "path = \"/etc/x\"\n", "exactly one of 'content' and 'source'");
  expect_error(base + "path = \"/etc/x\"\ncontent = \"x\"\nsource = \"files/tool.sh\"\n",
               "exactly one");
  expect_error(base + "path = \"/etc/x\"\nsource = \"../secret\"\n", "relative path below images/");
  expect_error(base + "path = \"/etc/x\"\nsource = \"/etc/shadow\"\n",
               "relative path below images/");
  expect_error(base + "path = \"/etc/x\"\nsource = \"files/none\"\n", "open files/none");
  expect_error(base + "path = \"/etc/x\"\ncontent = \"x\"\nmode = \"4755\"\n", "no setuid bits");
  expect_error(base + "path = \"/etc/x\"\ncontent = \"x\"\nmode = 755\n", "octal string");
  expect_error(base + "path = \"/etc/x\"\ncontent = \"x\"\nowner = \"root\"\n",
               "unknown key 'owner' in [[files]]");
  expect_error(
      base + "path = \"/etc/x\"\ncontent = \"x\"\n[[files]]\npath = \"/etc/x\"\ncontent = \"y\"\n",
      "listed twice");
}

TEST(Recipe, ShippedRecipesParse) {
  for (const char* name : {"minimal", "python-data", "build", "render"}) {
    auto r = load_recipe(std::string(AIRLOCK_SOURCE_DIR) + "/images/" + name + ".toml");
    ASSERT_TRUE(r) << name << ": " << r.error().message();
    EXPECT_EQ(r->name, name);
  }
}
