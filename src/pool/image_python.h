// Whether an image can have preloaded sandboxes: the preloaded interpreter
// (sandbox/zygote.h) is airlock with the image's libpython loaded, so the
// image needs usr/bin/python3 (a link to python3.X), that version's shared
// library (Debian's libpython3.X, which python3 does not depend on) and
// pandas, the module the preload is for (docs/image-mounts.md). Read through
// a directory fd of the image's root (its mount, or any directory in tests);
// no symlink is followed out of it.
#pragma once

#include <string>

#include "base/result.h"
#include "jobs/image_source.h"

namespace airlock::jobs {

// The image's Python version ("3.11") when it qualifies; else kNotFound with
// what is missing (the image has no preloaded class, and says why).
Result<std::string> preloadable_python(int image_root);

// The same for a stored image, on a mount of its own (checked as a job's is:
// a corrupt image is kRefused). Not for the host image (the pool keeps
// host's preloaded class as it always has).
Result<std::string> preloadable_python(const ImageSource& image, const std::string& cache_dir);

}  // namespace airlock::jobs
