// The image store on a temporary directory: names, blobs, manifests, holds,
// rm and gc. The blobs are small files (the store does not look inside).
#include "images/image_store.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "base/sha256.h"
#include "images/image_use.h"
#include "sys/file_io.h"

namespace fs = std::filesystem;
using namespace airlock;
using namespace airlock::images;

namespace {

struct TempStore {
  std::string root;
  ImageStore store{""};
  TempStore() {
    std::string tmpl = fs::temp_directory_path() / "airlock-images-XXXXXX";
    root = ::mkdtemp(tmpl.data());
    store = ImageStore(root);
    EXPECT_TRUE(store.create_layout());
  }
  ~TempStore() { fs::remove_all(root); }

  // A "built image" in tmp/ with this content, added under `name`.
  StoredImage add(const std::string& name, const std::string& content) {
    std::string file = store.tmp_dir() + "/build-" + name + ".erofs";
    std::ofstream(file) << content;
    auto image = store.add(name, file, nlohmann::json{{"recipe_digest", "sha256:r"}});
    EXPECT_TRUE(image) << image.error().what;
    return image ? *image : StoredImage{};
  }
  std::string digest_of(const std::string& content) { return "sha256:" + Sha256::of(content); }
  std::vector<std::string> files(const std::string& dir) {
    std::vector<std::string> out;
    for (auto& e : fs::directory_iterator(root + "/" + dir)) out.push_back(e.path().filename());
    std::sort(out.begin(), out.end());
    return out;
  }
};

}  // namespace

TEST(ImageStore, DefaultRoot) {
  EXPECT_EQ(ImageStore::default_root("/var/lib/airlock"), "/var/lib/airlock/images");
  EXPECT_EQ(ImageStore::choose_root("/x", "/var/lib/airlock"), "/x");
}

TEST(ImageStore, AddResolveList) {
  TempStore t;
  StoredImage image = t.add("minimal", "image one");
  EXPECT_EQ(image.digest, t.digest_of("image one"));
  EXPECT_EQ(image.blob_path, t.root + "/blobs/" + Sha256::of("image one") + ".erofs");
  EXPECT_EQ(image.size, 9u);
  struct stat st {};
  ASSERT_EQ(::stat(image.blob_path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0444u);
  EXPECT_TRUE(t.files("tmp").empty());

  auto manifest = t.store.read_manifest(image);
  ASSERT_TRUE(manifest);
  EXPECT_EQ(image.manifest_digest, "sha256:" + Sha256::of(*manifest));
  auto parsed = nlohmann::json::parse(*manifest);
  EXPECT_EQ(parsed["digest"], image.digest);
  EXPECT_EQ(parsed["size"], 9);
  EXPECT_EQ(parsed["recipe_digest"], "sha256:r");

  auto resolved = t.store.resolve({"minimal", ""});
  ASSERT_TRUE(resolved) << resolved.error().what;
  EXPECT_EQ(resolved->digest, image.digest);
  EXPECT_EQ(resolved->manifest_digest, image.manifest_digest);
  auto pinned = t.store.resolve({"minimal", image.digest});
  ASSERT_TRUE(pinned) << pinned.error().what;
  EXPECT_TRUE(t.store.verify(*pinned));

  t.add("build", "image two");
  auto all = t.store.list();
  ASSERT_TRUE(all);
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].name, "build");
  EXPECT_EQ((*all)[1].name, "minimal");
}

TEST(ImageStore, UnknownImage) {
  TempStore t;
  auto r = t.store.resolve({"nothere", ""});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().what.find("unknown image 'nothere'"), std::string::npos) << r.error().what;
}

TEST(ImageStore, HostIsNotInTheStore) {
  TempStore t;
  auto r = t.store.resolve({"host", ""});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().what.find("machine's own /usr"), std::string::npos) << r.error().what;
  std::string file = t.store.tmp_dir() + "/x";
  std::ofstream(file) << "x";
  auto added = t.store.add("host", file, nlohmann::json::object());
  ASSERT_FALSE(added);
  EXPECT_NE(added.error().what.find("reserved"), std::string::npos);
  EXPECT_TRUE(t.files("names").empty());
}

TEST(ImageStore, PinnedDigestThatIsNotTheNames) {
  TempStore t;
  t.add("minimal", "one");
  auto r = t.store.resolve({"minimal", t.digest_of("two")});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().what.find("the name means " + t.digest_of("one")), std::string::npos)
      << r.error().what;
}

TEST(ImageStore, CorruptBlobFailsVerify) {
  TempStore t;
  StoredImage image = t.add("minimal", "original content");
  ASSERT_EQ(::chmod(image.blob_path.c_str(), 0644), 0);
  std::ofstream(image.blob_path) << "tampered content";
  auto resolved = t.store.resolve({"minimal", ""});
  ASSERT_TRUE(resolved);  // resolve does not hash
  auto v = t.store.verify(*resolved);
  ASSERT_FALSE(v);
  EXPECT_NE(v.error().what.find("is corrupt"), std::string::npos) << v.error().what;
  EXPECT_NE(v.error().what.find(t.digest_of("tampered content")), std::string::npos);
}

TEST(ImageStore, MissingBlobOrManifestOrCorruptName) {
  TempStore t;
  StoredImage image = t.add("minimal", "one");
  ASSERT_EQ(::unlink(t.store.manifest_path(image.digest).c_str()), 0);
  auto r = t.store.resolve({"minimal", ""});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().what.find("manifest is missing"), std::string::npos) << r.error().what;
  ASSERT_EQ(::unlink(image.blob_path.c_str()), 0);
  r = t.store.resolve({"minimal", ""});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().what.find("blob is missing"), std::string::npos) << r.error().what;
  std::ofstream(t.root + "/names/minimal") << "../../etc/passwd\n";
  r = t.store.resolve({"minimal", ""});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().what.find("is corrupt"), std::string::npos) << r.error().what;
}

TEST(ImageStore, SameContentKeepsItsFirstManifest) {
  TempStore t;
  StoredImage first = t.add("minimal", "same");
  std::string file = t.store.tmp_dir() + "/again";
  std::ofstream(file) << "same";
  auto second = t.store.add("minimal2", file, nlohmann::json{{"build_time", "later"}});
  ASSERT_TRUE(second);
  EXPECT_EQ(second->digest, first.digest);
  EXPECT_EQ(second->manifest_digest, first.manifest_digest);
  EXPECT_FALSE(fs::exists(file));
}

TEST(ImageStore, RecipeDigestsRecordWhatTheyWereBuiltInto) {
  TempStore t;
  std::string r1 = "sha256:" + std::string(64, '1'), r2 = "sha256:" + std::string(64, '2');
  auto add = [&](const std::string& content, const std::string& recipe) {
    std::string file = t.store.tmp_dir() + "/f";
    std::ofstream(file) << content;
    auto image = t.store.add("minimal", file, nlohmann::json{{"recipe_digest", recipe}});
    EXPECT_TRUE(image) << image.error().what;
    return *image;
  };
  StoredImage first = add("same bytes", r1);
  EXPECT_TRUE(t.store.built_from("minimal", r1));
  EXPECT_FALSE(t.store.built_from("minimal", r2));
  // Another recipe digest that gives the same bytes: the first manifest stays,
  // and both recipe digests are known to mean this image.
  StoredImage again = add("same bytes", r2);
  EXPECT_EQ(again.manifest_digest, first.manifest_digest);
  EXPECT_TRUE(t.store.built_from("minimal", r1));
  EXPECT_TRUE(t.store.built_from("minimal", r2));
  // The name moves on: neither is what the name means now.
  add("other bytes", "sha256:" + std::string(64, '3'));
  EXPECT_FALSE(t.store.built_from("minimal", r1));
  ASSERT_TRUE(t.store.gc());
  EXPECT_EQ(t.files("recipes"), std::vector<std::string>{std::string(64, '3')});
}

TEST(ImageStore, RemoveNameAndBlob) {
  TempStore t;
  StoredImage image = t.add("minimal", "one");
  auto report = t.store.remove("minimal");
  ASSERT_TRUE(report) << report.error().what;
  EXPECT_TRUE(report->blob_removed);
  EXPECT_EQ(report->image.digest, image.digest);
  EXPECT_TRUE(t.files("names").empty());
  EXPECT_TRUE(t.files("blobs").empty());
  EXPECT_TRUE(t.files("manifests").empty());
  auto again = t.store.remove("minimal");
  ASSERT_FALSE(again);
  EXPECT_NE(again.error().what.find("unknown image"), std::string::npos);
}

TEST(ImageStore, RemoveKeepsABlobAnotherNamePointsTo) {
  TempStore t;
  t.add("a", "shared");
  t.add("b", "shared");
  auto report = t.store.remove("a");
  ASSERT_TRUE(report);
  EXPECT_FALSE(report->blob_removed);
  EXPECT_TRUE(t.store.resolve({"b", ""}));
}

TEST(ImageStore, RemoveBadNameChangesNothing) {
  TempStore t;
  t.add("minimal", "one");
  for (std::string name : std::vector<std::string>{"../names/minimal", "", "MINIMAL", "host"}) {
    auto r = t.store.remove(name);
    ASSERT_FALSE(r) << name;
  }
  EXPECT_EQ(t.files("names"), std::vector<std::string>{"minimal"});
  EXPECT_EQ(t.files("blobs").size(), 1u);
}

TEST(ImageStore, RmAndGcOfAMissingStoreCreateNothing) {
  TempStore t;
  ImageStore missing(t.root + "/none");
  auto r = missing.remove("minimal");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().what.find("unknown image 'minimal'"), std::string::npos) << r.error().what;
  auto g = missing.gc();
  ASSERT_TRUE(g) << g.error().what;
  EXPECT_TRUE(g->removed.empty());
  EXPECT_FALSE(fs::exists(t.root + "/none"));
}

TEST(ImageStore, RemoveRefusesAnImageInUseAndSaysWho) {
  TempStore t;
  StoredImage image = t.add("minimal", "one");
  {
    auto use = ImageUse::hold(t.store, image);
    ASSERT_TRUE(use) << use.error().what;
    auto r = t.store.remove("minimal");
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().what.find("is in use"), std::string::npos) << r.error().what;
    EXPECT_NE(r.error().what.find("pid " + std::to_string(::getpid())), std::string::npos)
        << r.error().what;
    EXPECT_TRUE(t.store.resolve({"minimal", ""}));
    EXPECT_TRUE(fs::exists(image.blob_path));
  }
  EXPECT_TRUE(t.store.remove("minimal"));
}

TEST(ImageStore, HoldAfterRemovalFails) {
  TempStore t;
  StoredImage image = t.add("minimal", "one");
  ASSERT_TRUE(t.store.remove("minimal"));
  auto use = ImageUse::hold(t.store, image);
  ASSERT_FALSE(use);
  EXPECT_NE(use.error().what.find("was removed"), std::string::npos) << use.error().what;
}

TEST(ImageStore, GcRemovesOnlyUnnamedUnheldBlobs) {
  TempStore t;
  StoredImage kept_by_name = t.add("minimal", "v1");
  StoredImage old_held = t.add("build", "v1 of build");
  StoredImage old_free = t.add("render", "v1 of render");
  auto use = ImageUse::hold(t.store, old_held);
  ASSERT_TRUE(use);
  t.add("build", "v2 of build");    // the old build blob is unnamed but held
  t.add("render", "v2 of render");  // the old render blob is unnamed and free
  auto unnamed = t.store.unnamed();
  ASSERT_TRUE(unnamed);
  EXPECT_EQ(unnamed->size(), 2u);

  auto report = t.store.gc();
  ASSERT_TRUE(report) << report.error().what;
  ASSERT_EQ(report->removed.size(), 1u);
  EXPECT_EQ(report->removed[0].digest, old_free.digest);
  EXPECT_EQ(report->freed_bytes, old_free.size);
  ASSERT_EQ(report->kept.size(), 1u);
  EXPECT_EQ(report->kept[0].digest, old_held.digest);
  EXPECT_NE(report->kept[0].reason.find("pid " + std::to_string(::getpid())), std::string::npos);
  EXPECT_FALSE(fs::exists(old_free.blob_path));
  EXPECT_FALSE(fs::exists(t.store.manifest_path(old_free.digest)));
  EXPECT_TRUE(fs::exists(old_held.blob_path));
  EXPECT_TRUE(fs::exists(kept_by_name.blob_path));
  EXPECT_EQ(t.store.list()->size(), 3u);
}

TEST(ImageStore, GcRemovesLeftoverBuildsButNotRunningOnes) {
  TempStore t;
  std::string stale = t.store.tmp_dir() + "/build-stale";
  std::string running = t.store.tmp_dir() + "/build-running";
  ASSERT_TRUE(sys::make_dirs(stale + "/root/usr"));
  ASSERT_TRUE(sys::make_dirs(running + "/root"));
  UniqueFd lock(::open(running.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  ASSERT_TRUE(lock);
  ASSERT_EQ(::flock(lock.get(), LOCK_EX), 0);
  auto report = t.store.gc();
  ASSERT_TRUE(report) << report.error().what;
  EXPECT_EQ(report->stale_builds, 1);
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(running));
}

TEST(ImageUse, FlockHoldersFromProcLocks) {
  std::string locks =
      "1: POSIX  ADVISORY  WRITE 32081 fe:00:408224 0 EOF\n"
      "2: FLOCK  ADVISORY  READ 32105 fe:00:10953277 0 EOF\n"
      "3: FLOCK  ADVISORY  READ 32106 fe:00:10953277 0 EOF\n"
      "3: -> FLOCK  ADVISORY  WRITE 32107 fe:00:10953277 0 EOF\n"
      "4: FLOCK  ADVISORY  READ 40000 fe:00:1095327 0 EOF\n"
      "5: FLOCK  ADVISORY  READ 40001 08:01:10953277 0 EOF\n";
  EXPECT_EQ(flock_holders(locks, makedev(0xfe, 0), 10953277), (std::vector<pid_t>{32105, 32106}));
  EXPECT_TRUE(flock_holders("", makedev(0xfe, 0), 1).empty());
}
