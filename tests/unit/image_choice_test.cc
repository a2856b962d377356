// The service's image configuration and what it accepts (service/image_choice.h).
#include "service/image_choice.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>

#include "sys/file_io.h"
#include "sys/remove_tree.h"

using namespace airlock;
using namespace airlock::service;

namespace {

const std::string kDigest = "sha256:" + std::string(64, 'b');

class ImageChoice : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/airlock-image-choice-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    for (const char* d : {"/blobs", "/manifests", "/names"}) ASSERT_TRUE(sys::make_dirs(dir_ + d));
    const std::string hex(64, 'b');
    ASSERT_TRUE(sys::write_file_atomic(dir_ + "/blobs/" + hex + ".erofs", "not really an image"));
    ASSERT_TRUE(sys::write_file_atomic(dir_ + "/manifests/" + hex + ".json", "{}"));
    ASSERT_TRUE(sys::write_file_atomic(dir_ + "/names/pydata", kDigest + "\n"));
    auto c = parse_config("image_dir = \"" + dir_ + "\"\ndefault_image = \"pydata\"\n"
                          "pool_images = [\"pydata\"]\n"
                          "[tenants.narrow]\nimages = [\"pydata\"]\nweight = 2\n");
    ASSERT_TRUE(c) << c.error().message();
    config_ = *c;
  }
  void TearDown() override { (void)sys::remove_tree(dir_); }
  std::string dir_;
  ServiceConfig config_;
};

TEST_F(ImageChoice, ConfigurationNamesTheStoreTheDefaultPoolsAndEachTenantsImages) {
  EXPECT_EQ(config_.image_dir, dir_);
  EXPECT_EQ(config_.default_image, "pydata");
  EXPECT_EQ(config_.pool_images, std::vector<std::string>{"pydata"});
  EXPECT_TRUE(tenant_may_use_image(config_, "narrow", "pydata"));
  EXPECT_FALSE(tenant_may_use_image(config_, "narrow", "host"));
  EXPECT_TRUE(tenant_may_use_image(config_, "anyone-else", "host"));
  EXPECT_EQ(service_image_dir(ServiceConfig{}), "/var/lib/airlock/images");
  // Bad values are refused with the key.
  auto bad_name = parse_config("[tenants.t]\nimages = [\"Not Valid\"]\n");
  ASSERT_FALSE(bad_name);
  EXPECT_NE(bad_name.error().message().find("tenants.t.images"), std::string::npos);
  auto bad_default = parse_config("default_image = \"x@sha256:12\"\n");
  ASSERT_FALSE(bad_default);
  EXPECT_NE(bad_default.error().message().find("default_image"), std::string::npos);
  EXPECT_FALSE(parse_config("pool_images = \"pydata\"\n"));
}

TEST_F(ImageChoice, ANameIsResolvedToItsDigestWhenAccepted) {
  auto named = accept_image(config_, "narrow", "pydata");
  ASSERT_TRUE(named);
  EXPECT_EQ(*named, "pydata@" + kDigest);
  auto by_default = accept_image(config_, "other", "");
  ASSERT_TRUE(by_default);
  EXPECT_EQ(*by_default, "pydata@" + kDigest);
  // Pinned and host pass as they are; an unknown name is left for airlock
  // run to refuse (the job ends input_rejected with the reason).
  EXPECT_EQ(*accept_image(config_, "other", "pydata@" + kDigest), "pydata@" + kDigest);
  EXPECT_EQ(*accept_image(config_, "other", "host"), "host");
  EXPECT_EQ(*accept_image(config_, "other", "unknown"), "unknown");
}

TEST_F(ImageChoice, ATenantGetsOnlyItsImages) {
  auto host = accept_image(config_, "narrow", "host");
  ASSERT_FALSE(host);
  EXPECT_EQ(host.error().status, 403);
  EXPECT_NE(host.error().message.find("may not use the image 'host'"), std::string::npos);
  auto bad = accept_image(config_, "narrow", "Bad Name");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().status, 400);
}

}  // namespace
