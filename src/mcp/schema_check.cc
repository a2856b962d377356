#include "mcp/schema_check.h"

#include "base/utf8.h"

namespace airlock::mcp {

using json = nlohmann::json;

namespace {

bool has_type(const json& v, const std::string& type) {
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  if (type == "string") return v.is_string();
  if (type == "boolean") return v.is_boolean();
  if (type == "integer") return v.is_number_integer() || v.is_number_unsigned();
  if (type == "number") return v.is_number();
  if (type == "null") return v.is_null();
  return false;
}

// Code points, as JSON Schema counts a string's length.
size_t code_points(const std::string& s) {
  size_t n = 0;
  for (size_t i = 0; i < s.size();) {
    size_t len = utf8_sequence(s, i);
    i += len ? len : 1;
    ++n;
  }
  return n;
}

std::string where(const std::string& path) { return path.empty() ? "the arguments" : path; }

std::optional<std::string> check(const json& schema, const json& v, const std::string& path) {
  if (schema.contains("type")) {
    const std::string type = schema["type"];
    if (!has_type(v, type)) {
      const char* article =
          (type == "object" || type == "array" || type == "integer") ? "an " : "a ";
      return where(path) + ": must be " + article + type;
    }
  }
  if (schema.contains("enum")) {
    bool found = false;
    for (const auto& e : schema["enum"]) found = found || e == v;
    if (!found) {
      std::string list;
      for (const auto& e : schema["enum"]) list += (list.empty() ? "" : ", ") + e.dump();
      return where(path) + ": must be one of " + list;
    }
  }
  if (v.is_string()) {
    size_t n = code_points(v.get_ref<const std::string&>());
    if (schema.contains("minLength") && n < schema["minLength"].get<size_t>())
      return where(path) + ": must not be shorter than " +
             std::to_string(schema["minLength"].get<size_t>()) + " characters";
    if (schema.contains("maxLength") && n > schema["maxLength"].get<size_t>())
      return where(path) + ": must be at most " +
             std::to_string(schema["maxLength"].get<size_t>()) + " characters";
  }
  if (v.is_number()) {
    double d = v.get<double>();
    if (schema.contains("minimum") && d < schema["minimum"].get<double>())
      return where(path) + ": must be at least " + schema["minimum"].dump();
    if (schema.contains("maximum") && d > schema["maximum"].get<double>())
      return where(path) + ": must be at most " + schema["maximum"].dump();
  }
  if (v.is_array()) {
    if (schema.contains("maxItems") && v.size() > schema["maxItems"].get<size_t>())
      return where(path) + ": at most " + schema["maxItems"].dump() + " items";
    if (schema.contains("items")) {
      for (size_t i = 0; i < v.size(); ++i)
        if (auto e = check(schema["items"], v[i], path + "[" + std::to_string(i) + "]")) return e;
    }
  }
  if (v.is_object()) {
    const json& props = schema.contains("properties") ? schema["properties"] : json::object();
    if (schema.contains("required")) {
      for (const auto& r : schema["required"]) {
        if (!v.contains(r.get<std::string>()))
          return (path.empty() ? "" : path + ".") + r.get<std::string>() + ": is required";
      }
    }
    bool closed =
        schema.contains("additionalProperties") && schema["additionalProperties"] == false;
    for (const auto& [name, value] : v.items()) {
      std::string sub = path.empty() ? name : path + "." + name;
      if (props.contains(name)) {
        if (auto e = check(props[name], value, sub)) return e;
      } else if (closed) {
        std::string known;
        for (const auto& [k, _] : props.items()) known += (known.empty() ? "" : ", ") + k;
        return sub + ": unknown argument (known: " + known + ")";
      }
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> check_arguments(const json& schema, const json& value) {
  return check(schema, value, "");
}

}  // namespace airlock::mcp
