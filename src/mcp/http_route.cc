#include "mcp/http_route.h"

#include "mcp/jsonrpc.h"
#include "mcp/origin_check.h"
#include "mcp/protocol.h"
#include "api/route_helpers.h"
#include "store/secrets.h"

namespace airlock::mcp {

using api::HttpResponse;
using json = nlohmann::json;

namespace {

HttpResponse jsonrpc_http(int status, const json& message) {
  HttpResponse r;
  r.status = status;
  r.body = serialize(message);
  r.headers.emplace_back("Content-Type", "application/json");
  return r;
}

bool loopback_address(const std::string& a) {
  return a.rfind("127.", 0) == 0 || a == "::1" || a == "localhost";
}

std::string connect_host(const std::string& listen) {
  if (listen == "0.0.0.0" || listen.empty()) return "127.0.0.1";
  if (listen == "::") return "::1";
  return listen;
}

std::string bearer(const std::string& authorization) {
  static constexpr std::string_view kPrefix = "Bearer ";
  return authorization.rfind(kPrefix, 0) == 0 ? authorization.substr(kPrefix.size()) : "";
}

// A visible-ASCII id the client echoes (Mcp-Session-Id), or "" if none.
bool valid_session_header(const std::string& s) {
  if (s.size() > 128) return false;
  for (char c : s)
    if (c < 0x21 || c > 0x7e) return false;
  return true;
}

std::string new_session_id() {
  auto id = store::random_hex(16);
  return id ? *id : "";
}

}  // namespace

McpRoute::McpRoute(McpRouteOptions options)
    : options_(std::move(options)), calls_(options_.max_calls), pool_(options_.threads) {}

McpRoute::~McpRoute() {
  calls_.cancel_all();
  pool_.stop();
}

void McpRoute::install(api::HttpServer& server, service::JobService& service) {
  api::RouteOptions body;
  body.max_body_bytes = kMaxMessageBytes;
  service::add(
      server, service, "POST", "/mcp",
      [this, &service](const service::ExchangePtr& ex, const service::Caller& caller) {
        service.metrics().request(200);
        post(ex, caller);
      },
      body);
}

void McpRoute::post(const std::shared_ptr<api::Exchange>& ex, const service::Caller& caller) {
  const auto& req = ex->request();
  if (!origin_allowed(req.header("origin")) ||
      !host_allowed(req.header("host"), loopback_address(options_.listen_address)))
    return ex->respond(
        HttpResponse::error(403, "forbidden_origin",
                            "the Origin or Host header is not this local server (DNS rebinding "
                            "protection)"));
  std::string version = req.header("mcp-protocol-version");
  if (!version.empty() && !is_supported_version(version))
    return ex->respond(jsonrpc_http(
        400,
        error_response(nullptr, kInvalidRequest, "unsupported MCP-Protocol-Version " + version)));
  std::string session = req.header("mcp-session-id");
  if (!valid_session_header(session))
    return ex->respond(
        jsonrpc_http(400, error_response(nullptr, kInvalidRequest, "malformed Mcp-Session-Id")));

  auto m = parse_message(req.body);
  if (!m) return ex->respond(jsonrpc_http(400, m.error()));
  // The client a cancellation may name: this key and this MCP session.
  std::string client = caller.key.id + "\n" + session;
  if (m->kind != MessageKind::kRequest) {
    if (auto id = cancelled_request(*m)) calls_.cancel(in_flight_key(client, *id));
    HttpResponse accepted;
    accepted.status = 202;
    return ex->respond(std::move(accepted));
  }

  ApiTarget target;
  target.host = connect_host(options_.listen_address);
  target.port = port_.load();
  target.key = bearer(req.header("authorization"));
  std::string host = req.header("host");
  target.base_url =
      "http://" + (host.empty() ? target.host + ":" + std::to_string(target.port) : host);
  target.event_keepalive_ms = options_.event_keepalive_ms;
  ApiFactory api = [target] { return std::make_unique<ApiConnection>(target); };

  if (!is_tool_call(*m)) {
    auto reply = answer(*m, CallContext{}, api);
    HttpResponse r = jsonrpc_http(200, *reply);
    if (m->method == "initialize") {
      std::string id = new_session_id();
      if (!id.empty()) r.headers.emplace_back("Mcp-Session-Id", id);
    }
    return ex->respond(std::move(r));
  }

  std::string key = in_flight_key(client, m->id);
  auto flag = calls_.add(key);
  if (!flag)
    return ex->respond(
        jsonrpc_http(200, error_response(m->id, kInvalidRequest,
                                         calls_.size() >= calls_.max_calls()
                                             ? "too many tool calls at once: wait for one to end"
                                             : "a request with this id is still in flight")));
  auto token = progress_token(*m);
  bool stream = token && req.header("accept").find("text/event-stream") != std::string::npos;
  if (stream) ex->start_events();
  pool_.post([this, ex, api, key, flag, token, stream, msg = std::move(*m)] {
    CallContext ctx;
    ctx.cancelled = flag;
    if (stream) {
      auto count = std::make_shared<int>(0);
      ctx.progress = [ex, token = *token, count](const std::string& text) {
        ex->send_event("", "message", serialize(progress_notification(token, ++*count, text)));
      };
    }
    auto reply = answer(msg, ctx, api);
    calls_.remove(key);
    bool cancelled = flag->load();  // a cancelled request gets no response
    if (stream) {
      if (reply && !cancelled) ex->send_event("", "message", serialize(*reply));
      return ex->end_events();
    }
    if (!reply || cancelled) {
      HttpResponse accepted;
      accepted.status = 202;
      return ex->respond(std::move(accepted));
    }
    ex->respond(jsonrpc_http(200, *reply));
  });
}

}  // namespace airlock::mcp
