// The pure parts of an image build: the host's Debian mirror from apt's own
// view, the package list, the manifest, mounts beneath a build directory.
#include <gtest/gtest.h>

#include "images/apt_sources.h"
#include "images/build_dir.h"
#include "images/image_build.h"
#include "images/manifest.h"

using namespace airlock::images;

TEST(AptSources, DebianReposOfTheHostForTheRecipesSuite) {
  std::string targets =
      "http://deb.debian.org/debian-security/\tbookworm-security\tDebian\tmain\n"
      "http://deb.debian.org/debian/\tbookworm-updates\tDebian\tmain\n"
      "http://deb.debian.org/debian/\tbookworm\tDebian\tmain\n"
      "http://deb.debian.org/debian/\tbookworm\tDebian\tcontrib\n"
      "https://deb.nodesource.com/node_20.x/\tnodistro\tNodesource\tmain\n"
      "https://packages.cloud.google.com/apt/\tcloud-sdk-bookworm\tcloud-sdk\tmain\n";
  auto same = debian_sources(targets, "bookworm");
  ASSERT_TRUE(same) << same.error().what;
  EXPECT_EQ(*same,
            "deb http://deb.debian.org/debian-security bookworm-security main\n"
            "deb http://deb.debian.org/debian bookworm-updates main\n"
            "deb http://deb.debian.org/debian bookworm contrib main\n");
  auto other = debian_sources(targets, "trixie");
  ASSERT_TRUE(other);
  EXPECT_NE(other->find("deb http://deb.debian.org/debian trixie contrib main\n"),
            std::string::npos);
  EXPECT_NE(other->find("trixie-security main"), std::string::npos);
  EXPECT_EQ(other->find("bookworm"), std::string::npos);
}

TEST(AptSources, NoDebianRepositoryIsAClearError) {
  auto none = debian_sources("https://deb.nodesource.com/node_20.x/\tnodistro\tNodesource\tmain\n",
                             "bookworm");
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().what.find("no Debian repository"), std::string::npos);
  // A URI that would split the sources line is not taken.
  auto odd = debian_sources("http://x/ a\tbookworm\tDebian\tmain\n", "bookworm");
  EXPECT_FALSE(odd);
}

TEST(Manifest, DpkgQueryInstalledPackagesSorted) {
  auto packages = parse_dpkg_query(
      "zlib1g\t1:1.2.13.dfsg-1\tamd64\t168\tii \n"
      "bash\t5.2.15-2+b7\tamd64\t7160\tii \n"
      "oldpkg\t1.0\tamd64\t10\trc \n");
  ASSERT_TRUE(packages) << packages.error().what;
  ASSERT_EQ(packages->size(), 2u);
  EXPECT_EQ((*packages)[0].name, "bash");
  EXPECT_EQ((*packages)[0].installed_kib, 7160u);
  EXPECT_EQ((*packages)[1].version, "1:1.2.13.dfsg-1");
  EXPECT_FALSE(parse_dpkg_query("bash 5.2\n"));
  auto bad_size = parse_dpkg_query("bash\t5\tamd64\t12x\tii \n");
  ASSERT_FALSE(bad_size);
  EXPECT_NE(bad_size.error().what.find("'12x' is not a number"), std::string::npos);
}

TEST(Manifest, HoldsRecipePackagesAndBuild) {
  Recipe recipe;
  recipe.name = "minimal";
  recipe.suite = "bookworm";
  recipe.packages = {"python3"};
  recipe.env = {{"LANG", "C.UTF-8"}};
  recipe.smoke = "true";
  BuildFacts facts;
  facts.recipe_digest = recipe_digest(recipe);
  facts.packages = {{"bash", "5.2", "amd64", 100}, {"python3", "3.11.2-1", "amd64", 50}};
  facts.source_date_epoch = kDefaultSourceDateEpoch;
  facts.tools = {{"mmdebstrap", "1.3.5-7"}};
  auto m = make_manifest(recipe, facts);
  EXPECT_EQ(m["recipe_digest"], facts.recipe_digest);
  EXPECT_EQ(m["package_count"], 2);
  EXPECT_EQ(m["installed_size_kib"], 150);
  EXPECT_EQ(m["packages"][1]["version"], "3.11.2-1");
  EXPECT_EQ(m["env"]["LANG"], "C.UTF-8");
  EXPECT_EQ(m["build"]["source_date_epoch"], kDefaultSourceDateEpoch);
  EXPECT_EQ(m["build"]["tools"]["mmdebstrap"], "1.3.5-7");
  EXPECT_EQ(m["recipe"]["packages"][0], "python3");
}

TEST(BuildDir, MountsBeneathAPath) {
  std::string info =
      "22 1 254:0 / / rw,relatime - ext4 /dev/vda1 rw\n"
      "90 22 0:5 / /srv/store/tmp/build-x/root/proc rw - proc proc rw\n"
      "91 22 0:6 / /srv/store/tmp/build-x/root/with\\040space rw - tmpfs t rw\n"
      "92 22 0:7 / /srv/store/tmp/build-xy rw - tmpfs t rw\n";
  auto found = mounts_beneath(info, "/srv/store/tmp/build-x/");
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0], "/srv/store/tmp/build-x/root/proc");
  EXPECT_EQ(found[1], "/srv/store/tmp/build-x/root/with space");
  EXPECT_TRUE(mounts_beneath(info, "/srv/other").empty());
}

TEST(BuildDir, ErofsUuidIsFixedPerRecipe) {
  std::string a = erofs_uuid("sha256:aa"), b = erofs_uuid("sha256:bb");
  EXPECT_EQ(a, erofs_uuid("sha256:aa"));
  EXPECT_NE(a, b);
  EXPECT_EQ(a.size(), 36u);
  EXPECT_EQ(a[8], '-');
}
