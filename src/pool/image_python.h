// Whether an image can have preloaded sandboxes: the preloaded interpreter
// (sandbox/zygote.h) is airlock with the image's libpython loaded, so the
// image needs usr/bin/python3 (a link to python3.X), that version's shared
// library (Debian's libpython3.X, which python3 does not depend on) and
// pandas, the module the preload is for (docs/image-mounts.md). Read through
// a directory fd of the image's root (its mount, or any directory in tests);
// no symlink is followed out of it.
#pragma once

#include <memory>
#include <string>

#include "base/result.h"
#include "jobs/image_source.h"
#include "sandbox/zygote.h"

namespace airlock::jobs {

// The version of the image's usr/bin/python3 ("3.11" for a link to
// python3.11); kNotFound when it has none or it is not CPython 3.X.
Result<std::string> image_python_version(int image_root);

// Which Python a job on `image` runs when it runs python3: its version, for
// the python3.X names that count as a Python job (sandbox/preload_python.h).
// The host's /usr/bin/python3 for host; a stored image's usr/bin/python3
// link, read once on a mount of the image (checked as a job's is) and kept in
// the state directory's cache (cache/image-python/<hex>): a digest names the
// same bytes for ever. kNotFound when there is no CPython 3 (no Python job).
Result<std::string> job_python_version(const ImageSource& image, const std::string& cache_dir);

// The image's Python version ("3.11") when it qualifies; else kNotFound with
// what is missing (the image has no preloaded class, and says why).
Result<std::string> preloadable_python(int image_root);

// The same for a stored image, on a mount of its own (checked as a job's is:
// a corrupt image is kRefused). Not for the host image (the pool keeps
// host's preloaded class as it always has).
Result<std::string> preloadable_python(const ImageSource& image, const std::string& cache_dir);

// The preloaded interpreter of a stored image, for whoever keeps one per
// image (the pool, the sessions of the service): `options` (modules, env) as
// the caller wants them, on a mount of its own of the image (checked as a
// job's is); kNotFound when the image cannot have one (why, from
// preloadable_python), kRefused when the image is corrupt.
Result<std::unique_ptr<sandbox::Zygote>> start_image_zygote(const std::string& airlock_binary,
                                                            sandbox::ZygoteOptions options,
                                                            const ImageSource& image,
                                                            const std::string& cache_dir);

}  // namespace airlock::jobs
