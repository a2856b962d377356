// SessionService: the files of a session's /workspace. Uploads are admitted
// under the session's input policy, downloads pass its output policy; the
// copying runs on the task pool, never on an HTTP thread.
#include <fcntl.h>
#include <unistd.h>

#include "base/unique_fd.h"
#include "sessions/session_service.h"
#include "service/upload_check.h"
#include "workspace/live_files.h"
#include "workspace/names.h"

namespace airlock::service {
namespace {

using json = nlohmann::json;

std::unexpected<ApiError> from_file_error(const workspace::FileError& e) {
  static const std::map<std::string, int> kStatus = {
      {"bad_path", 400}, {"not_found", 404}, {"not_a_file", 409}, {"not_a_directory", 409},
      {"too_large", 413}, {"type_not_allowed", 400}};
  auto it = kStatus.find(e.code);
  return api_error(it == kStatus.end() ? 500 : it->second, e.code, e.message);
}

}  // namespace

void SessionService::put_file(const Caller& c, const std::string& id, const std::string& path,
                              const std::string& spooled, uint64_t size, Reply reply) {
  auto s = open_session(c, id, Access::kChange);
  if (!s) return reply(std::unexpected(s.error()));
  if (auto why = workspace::check_workspace_path(path))
    return reply(api_error(400, "bad_path", "path \"" + workspace::printable(path) + "\": " + *why));
  auto checked = check_upload(workspace::printable(path), spooled, size, (*s)->request().policy.inputs);
  if (!checked) return reply(std::unexpected(checked.error()));
  if (auto st = (*s)->reserve_upload(path, checked->size); !st)
    return reply(api_error(413, "too_large", st.error().message()));
  tasks_.post([session = *s, path, spooled, checked = *checked, reply] {
    auto copy = [&]() -> ApiResult<json> {
      auto ws = open_workspace(*session);
      if (!ws) return std::unexpected(ws.error());
      UniqueFd source(::open(spooled.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
      if (!source) return internal("read the upload");
      auto sha = workspace::put_file(ws->root.get(), path, source.get(), ws->engine->sandbox_uid(),
                                     ws->engine->sandbox_gid());
      if (!sha) return from_file_error(sha.error());
      if (*sha != checked.sha256) return internal("the upload changed while it was copied");
      return json{{"path", path}, {"size", checked.size}, {"sha256", *sha}, {"type", checked.type}};
    };
    auto copied = copy();
    session->end_upload(path, copied.has_value());
    if (copied) {
      json event = *copied;
      event["event"] = "upload";
      session->note(std::move(event));
    }
    reply(std::move(copied));
  });
}

ApiResult<json> SessionService::list_files(const Caller& c, const std::string& id, const std::string& path) {
  auto s = open_session(c, id, Access::kRead);
  if (!s) return std::unexpected(s.error());
  auto ws = open_workspace(**s);
  if (!ws) return std::unexpected(ws.error());
  auto listing = workspace::list_dir(ws->root.get(), path);
  if (!listing) return from_file_error(listing.error());
  json entries = json::array();
  for (const auto& e : listing->entries)
    entries.push_back({{"name", e.name}, {"kind", e.kind}, {"size", e.size}, {"modified_s", e.modified_s}});
  return json{{"path", path}, {"entries", entries}, {"truncated", listing->truncated}};
}

void SessionService::get_file(const Caller& c, const std::string& id, const std::string& path,
                              std::function<void(ApiResult<Download>)> reply) {
  auto s = open_session(c, id, Access::kRead);
  if (!s) return reply(std::unexpected(s.error()));
  // The copy lives (unlinked) beside the spooled request bodies, on the data disk.
  tasks_.post([session = *s, path, reply, spool_dir = config_.data_dir + "/spool"] {
    auto ws = open_workspace(*session);
    if (!ws) return reply(std::unexpected(ws.error()));
    auto got = workspace::read_checked(ws->root.get(), path, session->request().policy.outputs, spool_dir);
    if (!got) return reply(from_file_error(got.error()));
    session->note({{"event", "download"}, {"path", path}, {"size", got->size}, {"sha256", got->sha256},
                   {"type", got->type}});
    reply(Download{std::make_shared<UniqueFd>(std::move(got->copy)), got->size, got->sha256, got->type});
  });
}

void SessionService::delete_file(const Caller& c, const std::string& id, const std::string& path, Reply reply) {
  auto s = open_session(c, id, Access::kChange);
  if (!s) return reply(std::unexpected(s.error()));
  tasks_.post([session = *s, path, reply] {
    auto ws = open_workspace(*session);
    if (!ws) return reply(std::unexpected(ws.error()));
    auto removed = workspace::remove_path(ws->root.get(), path);
    if (!removed) return reply(from_file_error(removed.error()));
    session->forget_uploads(path);
    session->note({{"event", "delete"}, {"path", path}});
    reply(json{{"path", path}, {"deleted", true}});
  });
}

}  // namespace airlock::service
