#include "service/checkpoint_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace airlock::service {
namespace {

std::string real(const std::string& path) {
  char buf[PATH_MAX];
  return ::realpath(path.c_str(), buf) ? std::string(buf) : std::string();
}

bool inside(const std::string& path, const std::string& dir) {
  return !path.empty() && !dir.empty() && (path == dir || path.rfind(dir + "/", 0) == 0);
}

}  // namespace

Result<CheckpointWriter> CheckpointWriter::open(const std::string& key_path, const std::string& file,
                                                const std::string& data_dir) {
  std::string key_real = real(key_path), dir_real = real(data_dir);
  if (key_real.empty()) return fail("checkpoint_key " + key_path + " does not exist");
  if (inside(key_real, dir_real))
    return fail("checkpoint_key " + key_path + " is inside the data directory " + dir_real);
  std::ifstream in(key_path);
  std::ostringstream pem;
  pem << in.rdbuf();
  if (!in) return fail("cannot read checkpoint_key " + key_path);
  auto key = store::read_private_key_pem(pem.str());
  if (!key) return fail("checkpoint_key " + key_path + ": " + key.error().message());
  UniqueFd fd(::open(file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644));
  if (!fd) return fail_errno("cannot open checkpoint_file " + file);
  return CheckpointWriter(std::move(*key), std::move(fd));
}

Result<std::vector<std::string>> CheckpointWriter::write_changed(store::Store& store,
                                                                 const std::string& now) {
  auto heads = store.chain_heads();
  if (!heads) return forward(heads);
  std::vector<std::string> lines;
  std::string text;
  for (const auto& [tenant, head] : *heads) {
    auto last = written_.find(tenant);
    if (last != written_.end() && last->second.seq == head.seq && last->second.hash == head.hash)
      continue;
    auto line = store::make_checkpoint_line({tenant, head.seq, head.hash, now, "", ""}, key_.get());
    if (!line) return forward(line);
    text += *line + "\n";
    lines.push_back(std::move(*line));
  }
  if (lines.empty()) return lines;
  // One write of whole lines (O_APPEND), then fsync: a checkpoint is only
  // reported once it is durable.
  ssize_t n = ::write(fd_.get(), text.data(), text.size());
  if (n != static_cast<ssize_t>(text.size())) return fail_errno("cannot append to the checkpoint file");
  if (::fsync(fd_.get()) < 0) return fail_errno("cannot sync the checkpoint file");
  for (const auto& [tenant, head] : *heads) written_[tenant] = head;
  return lines;
}

}  // namespace airlock::service
