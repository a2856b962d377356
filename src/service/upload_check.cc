#include "service/upload_check.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <string_view>
#include <utility>

#include "base/result.h"
#include "base/sha256.h"
#include "base/unique_fd.h"
#include "workspace/file_type.h"

namespace airlock::service {
namespace {

// A file mapped read-only, unmapped on destruction.
class MappedFile {
 public:
  static Result<MappedFile> open(const std::string& path) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    if (!fd) return fail_errno("open " + path);
    struct stat st{};
    if (::fstat(fd.get(), &st) < 0) return fail_errno("stat " + path);
    size_t size = static_cast<size_t>(st.st_size);
    if (size == 0) return MappedFile(nullptr, 0);
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd.get(), 0);
    if (p == MAP_FAILED) return fail_errno("map " + path);
    return MappedFile(p, size);
  }
  MappedFile(MappedFile&& o) noexcept : data_(std::exchange(o.data_, nullptr)), size_(o.size_) {}
  ~MappedFile() {
    if (data_) ::munmap(data_, size_);
  }
  std::string_view view() const { return {static_cast<const char*>(data_), data_ ? size_ : 0}; }

 private:
  MappedFile(void* data, size_t size) : data_(data), size_(size) {}
  void* data_;
  size_t size_;
};

}  // namespace

ApiResult<CheckedUpload> check_upload(const std::string& name, const std::string& spooled, uint64_t size,
                                      const workspace::InputPolicy& policy) {
  if (size > policy.max_file_bytes)
    return api_error(413, "too_large", "file \"" + name + "\": " + std::to_string(size) +
                                           " bytes, more than the limit of " + std::to_string(policy.max_file_bytes));
  auto mapped = MappedFile::open(spooled);
  if (!mapped) return internal("read the upload: " + mapped.error().message());
  auto type = workspace::detect_type(mapped->view());
  if (!policy.allowed.count(type))
    return api_error(400, "type_not_allowed", "file \"" + name + "\": type " + std::string(workspace::type_name(type)) +
                                                  " is not allowed (allowed: " + workspace::describe_types(policy.allowed) + ")");
  return CheckedUpload{mapped->view().size(), Sha256::of(mapped->view()), std::string(workspace::type_name(type))};
}

}  // namespace airlock::service
