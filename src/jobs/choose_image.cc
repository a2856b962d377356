#include "jobs/choose_image.h"

#include <fcntl.h>
#include <unistd.h>

#include "images/image_ref.h"
#include "images/image_store.h"

namespace airlock::jobs {

Result<ChosenImage> choose_image(const std::string& text, const std::string& image_dir,
                                 const std::string& state_dir) {
  ChosenImage chosen;
  if (text.empty()) return chosen;  // host
  auto ref = images::parse_image_ref(text);
  if (!ref) {
    chosen.refusal = ref.error().message();
    return chosen;
  }
  if (ref->name == images::kHostImage) return chosen;  // parse_image_ref allows it unpinned only
  images::ImageStore store(images::ImageStore::choose_root(image_dir, state_dir));
  auto stored = store.resolve(*ref);
  if (!stored) {
    chosen.refusal = stored.error().message();
    return chosen;
  }
  auto use = images::ImageUse::hold(store, *stored);
  if (!use) {
    chosen.refusal = "image " + text + ": " + use.error().message();
    return chosen;
  }
  chosen.use.emplace(std::move(*use));
  chosen.source.info = {ref->name, stored->digest, stored->manifest_digest};
  chosen.source.blob_path = stored->blob_path;
  chosen.source.pinned = !ref->digest.empty();

  UniqueFd file(::open(stored->blob_path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!file) {
    chosen.refusal = "image " + text + " (" + stored->digest + ") is missing from the store";
    return chosen;
  }
  auto refusal = check_image_file(file.get(), stored->digest, state_dir + "/cache");
  if (!refusal) return std::unexpected(refusal.error());
  if (*refusal) chosen.refusal = "image " + text + ": " + **refusal;
  return chosen;
}

}  // namespace airlock::jobs
