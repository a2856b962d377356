// The image a job or session asked for, decided before anything starts:
// "host" (the machine's own /usr, unpinned), "NAME" (the digest the name
// means now) or "NAME@sha256:<hex>" (pinned: must still be what the name
// means, and be in the store). The image is then held (images/image_use.h)
// so `airlock image rm` and `gc` leave it alone, and its file is checked
// against its digest (image_source.h). An unknown, missing or corrupt image
// is a refusal with the reason: the job ends input_rejected.
#pragma once

#include <optional>
#include <string>

#include "base/result.h"
#include "images/image_use.h"
#include "jobs/image_source.h"

namespace airlock::jobs {

struct ChosenImage {
  ImageSource source;
  std::optional<images::ImageUse> use;  // held while the job or session uses it
  std::string refusal;                  // set: the image is refused, nothing else is
};

// `text` "" means host. `image_dir`: --image-dir (else $AIRLOCK_IMAGE_DIR, else <state_dir>/images).
Result<ChosenImage> choose_image(const std::string& text, const std::string& image_dir,
                                 const std::string& state_dir);

}  // namespace airlock::jobs
