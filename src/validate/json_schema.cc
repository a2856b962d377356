#include "validate/json_schema.h"

#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/nesting.h"
#include "validate/regex.h"
#include "validate/text.h"

namespace airlock::validate {
namespace {

using nlohmann::json;

constexpr std::string_view kKeywords =
    "type, enum, const, properties, required, additionalProperties, items, prefixItems, "
    "minItems, maxItems, uniqueItems, minLength, maxLength, pattern, minimum, maximum, "
    "exclusiveMinimum, exclusiveMaximum, multipleOf, anyOf, allOf, oneOf, not, $ref, $defs "
    "(root only); annotations: $schema, $comment, title, description, default, examples, "
    "deprecated, readOnly, writeOnly";

constexpr size_t kMaxSchemaDepth = 64;
constexpr std::string_view kDefsPrefix = "#/$defs/";

const std::set<std::string, std::less<>> kTypeNames = {"null",   "boolean", "object", "array",
                                                       "number", "string",  "integer"};
const std::set<std::string, std::less<>> kAnnotations = {
    "$schema", "$comment", "title", "description", "default",
    "examples", "deprecated", "readOnly", "writeOnly"};

std::string unescape_segment(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '~' && i + 1 < s.size() && (s[i + 1] == '0' || s[i + 1] == '1')) {
      out.push_back(s[i + 1] == '0' ? '~' : '/');
      ++i;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

// The root definition a "#/$defs/NAME" reference names, or null.
const json* resolve_ref(const json& root, std::string_view ref) {
  if (!ref.starts_with(kDefsPrefix)) return nullptr;
  std::string_view name = ref.substr(kDefsPrefix.size());
  if (name.empty() || name.find('/') != std::string_view::npos) return nullptr;
  if (!root.is_object()) return nullptr;
  auto defs = root.find("$defs");
  if (defs == root.end() || !defs->is_object()) return nullptr;
  auto it = defs->find(unescape_segment(name));
  return it == defs->end() ? nullptr : &*it;
}

bool is_count(const json& v) {
  if (v.is_number_unsigned()) return true;
  if (v.is_number_integer()) return v.get<int64_t>() >= 0;
  if (v.is_number_float()) {
    double d = v.get<double>();
    return d >= 0 && std::isfinite(d) && d == std::floor(d);
  }
  return false;
}

// --- Schema shape -----------------------------------------------------------

class SchemaChecker {
 public:
  explicit SchemaChecker(const json& root) : root_(root) {}

  Status check(const json& schema, std::string& at, size_t depth) {
    if (depth > kMaxSchemaDepth)
      return error(at, "subschemas nested deeper than " + std::to_string(kMaxSchemaDepth));
    if (schema.is_boolean()) return {};
    if (!schema.is_object()) return error(at, "a schema must be an object or a boolean");
    for (const auto& [key, value] : schema.items()) {
      size_t mark = at.size();
      at += "/" + pointer_segment(key);
      Status s = keyword(key, value, at, depth, mark == 0);
      at.resize(mark);
      if (!s) return s;
    }
    return {};
  }

 private:
  Status error(const std::string& at, const std::string& what) {
    return fail("schema at " + in_quotes(at, 200) + ": " + what);
  }

  Status subschema(const json& value, std::string& at, size_t depth) {
    return check(value, at, depth + 1);
  }

  Status schema_array(const json& value, std::string& at, size_t depth, const std::string& key) {
    if (!value.is_array() || value.empty())
      return error(at, key + " must be a non-empty array of schemas");
    for (size_t i = 0; i < value.size(); ++i) {
      size_t mark = at.size();
      at += "/" + std::to_string(i);
      Status s = subschema(value[i], at, depth);
      at.resize(mark);
      if (!s) return s;
    }
    return {};
  }

  Status schema_map(const json& value, std::string& at, size_t depth, const std::string& key) {
    if (!value.is_object()) return error(at, key + " must be an object of schemas");
    for (const auto& [name, sub] : value.items()) {
      size_t mark = at.size();
      at += "/" + pointer_segment(name);
      Status s = subschema(sub, at, depth);
      at.resize(mark);
      if (!s) return s;
    }
    return {};
  }

  Status keyword(const std::string& key, const json& value, std::string& at, size_t depth,
                 bool at_root) {
    // `at` already points at the keyword itself.
    if (kAnnotations.contains(key)) return {};
    if (key == "type") {
      auto one = [&](const json& t) { return t.is_string() && kTypeNames.contains(t.get<std::string>()); };
      if (one(value)) return {};
      if (value.is_array() && !value.empty()) {
        std::set<std::string> seen;
        for (const auto& t : value) {
          if (!one(t) || !seen.insert(t.get<std::string>()).second)
            return error(at, "type must be a type name or an array of distinct type names "
                             "(null, boolean, object, array, number, string, integer)");
        }
        return {};
      }
      return error(at, "type must be a type name or an array of distinct type names "
                       "(null, boolean, object, array, number, string, integer)");
    }
    if (key == "enum") {
      if (!value.is_array()) return error(at, "enum must be an array");
      return {};
    }
    if (key == "const") return {};
    if (key == "properties") return schema_map(value, at, depth, key);
    if (key == "$defs") {
      if (!at_root) return error(at, "$defs is only supported at the schema root");
      return schema_map(value, at, depth, key);
    }
    if (key == "required") {
      if (!value.is_array()) return error(at, "required must be an array of distinct strings");
      std::set<std::string> seen;
      for (const auto& r : value)
        if (!r.is_string() || !seen.insert(r.get<std::string>()).second)
          return error(at, "required must be an array of distinct strings");
      return {};
    }
    if (key == "additionalProperties" || key == "not") return subschema(value, at, depth);
    if (key == "items") {
      if (value.is_array())
        return error(at, "items must be a single schema (draft 2020-12; use prefixItems for tuples)");
      return subschema(value, at, depth);
    }
    if (key == "prefixItems" || key == "anyOf" || key == "allOf" || key == "oneOf")
      return schema_array(value, at, depth, key);
    if (key == "minItems" || key == "maxItems" || key == "minLength" || key == "maxLength") {
      if (!is_count(value)) return error(at, key + " must be a non-negative integer");
      return {};
    }
    if (key == "uniqueItems") {
      if (!value.is_boolean()) return error(at, "uniqueItems must be a boolean");
      return {};
    }
    if (key == "pattern") {
      if (!value.is_string()) return error(at, "pattern must be a string");
      if (auto re = Regex::compile(value.get<std::string>()); !re)
        return error(at, "pattern " + in_quotes(value.get<std::string>()) + ": " + re.error().what);
      return {};
    }
    if (key == "minimum" || key == "maximum" || key == "exclusiveMinimum" ||
        key == "exclusiveMaximum") {
      if (!value.is_number()) return error(at, key + " must be a number");
      return {};
    }
    if (key == "multipleOf") {
      if (!value.is_number() || !(value.get<double>() > 0))
        return error(at, "multipleOf must be a number greater than 0");
      return {};
    }
    if (key == "$ref") {
      if (!value.is_string() || !resolve_ref(root_, value.get<std::string>()))
        return error(at, "$ref must be \"#/$defs/NAME\" naming a definition in the root $defs");
      return {};
    }
    return error(at, "unsupported keyword " + in_quotes(key) + " (supported: " +
                         std::string(kKeywords) + ")");
  }

  const json& root_;
};

// --- Validation -------------------------------------------------------------

std::string type_of(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "boolean";
    case json::value_t::object: return "object";
    case json::value_t::array: return "array";
    case json::value_t::string: return "string";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "integer";
    case json::value_t::number_float: return "number";
    default: return "unsupported value";
  }
}

bool has_type(const json& v, const std::string& type) {
  if (type == "integer") {
    if (v.is_number_integer() || v.is_number_unsigned()) return true;
    if (!v.is_number_float()) return false;
    double d = v.get<double>();
    return std::isfinite(d) && d == std::floor(d);
  }
  if (type == "number") return v.is_number();
  return type_of(v) == type;
}

std::string show_number(const json& v) { return v.dump(); }

// Counts Unicode code points (the instance came through the JSON parser, so
// strings are valid UTF-8).
size_t code_points(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

bool is_multiple(const json& v, const json& m) {
  if ((v.is_number_integer() || v.is_number_unsigned()) &&
      (m.is_number_integer() || m.is_number_unsigned())) {
    if (v.is_number_unsigned() || m.is_number_unsigned()) {
      if (v.is_number_integer() && v.get<int64_t>() < 0) {
        uint64_t mag = 0 - static_cast<uint64_t>(v.get<int64_t>());
        return mag % m.get<uint64_t>() == 0;
      }
      return v.get<uint64_t>() % m.get<uint64_t>() == 0;
    }
    int64_t a = v.get<int64_t>(), b = m.get<int64_t>();
    return b != 0 && a % b == 0;
  }
  double q = v.get<double>() / m.get<double>();
  if (!std::isfinite(q)) return false;
  return std::fabs(q - std::round(q)) <= 1e-9 * std::max(1.0, std::fabs(q));
}

class Validator {
 public:
  Validator(const json& root, const SchemaLimits& limits) : root_(root), limits_(limits) {}

  bool validate(const json& schema, const json& v, std::string& at, size_t ref_depth) {
    if (aborted_) return false;
    if (++visits_ > limits_.max_visits)
      return abort("validation stopped after " + std::to_string(limits_.max_visits) +
                   " schema/value visits (document too large for this schema)", at);
    if (schema.is_boolean()) {
      if (schema.get<bool>()) return true;
      return fail_at(at, "no value is allowed here (false schema)");
    }
    if (!schema.is_object()) return abort("the schema is not an object or boolean", at);

    if (auto it = schema.find("$ref"); it != schema.end()) {
      const json* target = it->is_string() ? resolve_ref(root_, it->get<std::string>()) : nullptr;
      if (!target) return abort("unresolvable $ref " + in_quotes(it->dump()), at);
      if (ref_depth + 1 > limits_.max_ref_depth)
        return abort("$ref nested deeper than " + std::to_string(limits_.max_ref_depth), at);
      if (!validate(*target, v, at, ref_depth + 1)) return false;
    }
    if (auto it = schema.find("type"); it != schema.end()) {
      bool ok = false;
      if (it->is_string()) {
        ok = has_type(v, it->get<std::string>());
      } else {
        for (const auto& t : *it) ok = ok || (t.is_string() && has_type(v, t.get<std::string>()));
      }
      if (!ok) {
        std::string want = it->is_string() ? it->get<std::string>() : "one of " + it->dump();
        return fail_at(at, "expected " + want + ", got " + type_of(v));
      }
    }
    if (auto it = schema.find("const"); it != schema.end() && v != *it)
      return fail_at(at, "must equal the const value " + printable(it->dump(), 120, false));
    if (auto it = schema.find("enum"); it != schema.end()) {
      bool found = false;
      for (const auto& e : *it) found = found || e == v;
      if (!found) return fail_at(at, "must be one of " + printable(it->dump(), 200, false));
    }
    if (v.is_number() && !numeric(schema, v, at)) return false;
    if (v.is_string() && !string(schema, v.get_ref<const std::string&>(), at)) return false;
    if (v.is_array() && !array(schema, v, at, ref_depth)) return false;
    if (v.is_object() && !object(schema, v, at, ref_depth)) return false;
    return combinators(schema, v, at, ref_depth);
  }

  bool aborted() const { return aborted_; }
  const std::string& error() const { return error_; }

 private:
  bool fail_at(const std::string& at, const std::string& what) {
    error_ = "at " + in_quotes(at, 200) + ": " + what;
    return false;
  }
  bool abort(const std::string& what, const std::string& at) {
    aborted_ = true;
    return fail_at(at, what);
  }

  bool numeric(const json& s, const json& v, const std::string& at) {
    double x = v.get<double>();
    auto bound = [&](const char* key, bool (*ok)(double, double), const char* relation) {
      auto it = s.find(key);
      if (it == s.end() || ok(x, it->get<double>())) return true;
      return fail_at(at, show_number(v) + " is " + relation + " " + show_number(*it) + " (" +
                             key + ")");
    };
    // Two integers compare exactly (as doubles, values above 2^53 would round).
    auto int_cmp = [&](const char* key) -> std::optional<int> {
      auto it = s.find(key);
      if (it == s.end()) return std::nullopt;
      bool vi = v.is_number_integer() || v.is_number_unsigned();
      bool bi = it->is_number_integer() || it->is_number_unsigned();
      if (!vi || !bi) return std::nullopt;
      if (v.is_number_unsigned() && it->is_number_unsigned())
        return v.get<uint64_t>() < it->get<uint64_t>() ? -1 : v.get<uint64_t>() > it->get<uint64_t>();
      if (v.is_number_unsigned()) return 1;   // huge unsigned > any signed bound
      if (it->is_number_unsigned()) return -1;
      return v.get<int64_t>() < it->get<int64_t>() ? -1 : v.get<int64_t>() > it->get<int64_t>();
    };
    struct Rule {
      const char* key;
      bool (*pass_cmp)(int);
      bool (*pass_double)(double, double);
      const char* relation;
    };
    static const Rule rules[] = {
        {"minimum", [](int c) { return c >= 0; }, [](double a, double b) { return a >= b; },
         "less than the minimum"},
        {"maximum", [](int c) { return c <= 0; }, [](double a, double b) { return a <= b; },
         "greater than the maximum"},
        {"exclusiveMinimum", [](int c) { return c > 0; }, [](double a, double b) { return a > b; },
         "not greater than"},
        {"exclusiveMaximum", [](int c) { return c < 0; }, [](double a, double b) { return a < b; },
         "not less than"},
    };
    for (const Rule& r : rules) {
      if (auto c = int_cmp(r.key)) {
        if (!r.pass_cmp(*c))
          return fail_at(at, show_number(v) + " is " + r.relation + " " +
                                 show_number(s.at(r.key)) + " (" + r.key + ")");
        continue;
      }
      if (!bound(r.key, r.pass_double, r.relation)) return false;
    }
    if (auto it = s.find("multipleOf"); it != s.end() && !is_multiple(v, *it))
      return fail_at(at, show_number(v) + " is not a multiple of " + show_number(*it));
    return true;
  }

  bool string(const json& s, const std::string& str, const std::string& at) {
    size_t len = std::string::npos;
    auto length = [&] { return len == std::string::npos ? (len = code_points(str)) : len; };
    if (auto it = s.find("minLength"); it != s.end() && length() < it->get<double>())
      return fail_at(at, "string of " + std::to_string(length()) +
                             " characters is shorter than minLength " + show_number(*it));
    if (auto it = s.find("maxLength"); it != s.end() && length() > it->get<double>())
      return fail_at(at, "string of " + std::to_string(length()) +
                             " characters is longer than maxLength " + show_number(*it));
    if (auto it = s.find("pattern"); it != s.end()) {
      const std::string& pattern = it->get_ref<const std::string&>();
      if (str.size() > limits_.max_pattern_length)
        return fail_at(at, "string of " + std::to_string(str.size()) +
                               " bytes is too long to match against a pattern (limit " +
                               std::to_string(limits_.max_pattern_length) + ")");
      auto [entry, inserted] = regexes_.try_emplace(&*it);
      if (inserted) {
        auto re = Regex::compile(pattern);
        if (!re) return abort("pattern " + in_quotes(pattern) + ": " + re.error().what, at);
        entry->second = std::move(*re);
      }
      pattern_steps_ += (str.size() + 1) * entry->second.size();
      if (pattern_steps_ > limits_.max_pattern_steps)
        return abort("validation stopped: pattern matching exceeded " +
                         std::to_string(limits_.max_pattern_steps) + " steps",
                     at);
      if (!entry->second.search(str))
        return fail_at(at, in_quotes(str, 60) + " does not match the pattern " + in_quotes(pattern));
    }
    return true;
  }

  bool array(const json& s, const json& v, std::string& at, size_t ref_depth) {
    if (auto it = s.find("minItems"); it != s.end() && v.size() < it->get<double>())
      return fail_at(at, "array of " + std::to_string(v.size()) + " items is shorter than minItems " +
                             show_number(*it));
    if (auto it = s.find("maxItems"); it != s.end() && v.size() > it->get<double>())
      return fail_at(at, "array of " + std::to_string(v.size()) + " items is longer than maxItems " +
                             show_number(*it));
    if (auto it = s.find("uniqueItems"); it != s.end() && it->get<bool>()) {
      // n log n comparisons, paid for from the visit budget.
      visits_ += v.size();
      if (visits_ > limits_.max_visits)
        return abort("validation stopped after " + std::to_string(limits_.max_visits) +
                         " schema/value visits (document too large for this schema)",
                     at);
      std::map<json, size_t> seen;
      for (size_t i = 0; i < v.size(); ++i) {
        auto [pos, inserted] = seen.emplace(v[i], i);
        if (!inserted)
          return fail_at(at, "items " + std::to_string(pos->second) + " and " + std::to_string(i) +
                                 " are equal (uniqueItems)");
      }
    }
    size_t prefix = 0;
    if (auto it = s.find("prefixItems"); it != s.end()) {
      prefix = it->size();
      for (size_t i = 0; i < prefix && i < v.size(); ++i)
        if (!child(it->at(i), v[i], at, std::to_string(i), ref_depth)) return false;
    }
    if (auto it = s.find("items"); it != s.end())
      for (size_t i = prefix; i < v.size(); ++i)
        if (!child(*it, v[i], at, std::to_string(i), ref_depth)) return false;
    return true;
  }

  bool object(const json& s, const json& v, std::string& at, size_t ref_depth) {
    if (auto it = s.find("required"); it != s.end())
      for (const auto& name : *it)
        if (!v.contains(name.get_ref<const std::string&>()))
          return fail_at(at, "required property " + in_quotes(name.get_ref<const std::string&>()) +
                                 " is missing");
    auto props = s.find("properties");
    auto additional = s.find("additionalProperties");
    for (const auto& [key, value] : v.items()) {
      bool declared = props != s.end() && props->contains(key);
      if (declared) {
        if (!child(props->at(key), value, at, pointer_segment(key), ref_depth)) return false;
      } else if (additional != s.end()) {
        if (additional->is_boolean() && !additional->get<bool>()) {
          size_t mark = at.size();
          at += "/" + pointer_segment(key);
          fail_at(at, "property " + in_quotes(key) + " is not allowed (additionalProperties)");
          at.resize(mark);
          return false;
        }
        if (!child(*additional, value, at, pointer_segment(key), ref_depth)) return false;
      }
    }
    return true;
  }

  bool combinators(const json& s, const json& v, std::string& at, size_t ref_depth) {
    if (auto it = s.find("allOf"); it != s.end())
      for (const auto& sub : *it)
        if (!validate(sub, v, at, ref_depth)) return false;
    if (auto it = s.find("anyOf"); it != s.end()) {
      bool any = false;
      for (const auto& sub : *it) {
        if (validate(sub, v, at, ref_depth)) {
          any = true;
          break;
        }
        if (aborted_) return false;
      }
      if (!any) return fail_at(at, "matches none of the " + std::to_string(it->size()) +
                                       " anyOf schemas");
    }
    if (auto it = s.find("oneOf"); it != s.end()) {
      std::vector<size_t> matched;
      for (size_t i = 0; i < it->size(); ++i) {
        if (validate(it->at(i), v, at, ref_depth)) matched.push_back(i);
        if (aborted_) return false;
      }
      if (matched.empty())
        return fail_at(at, "matches none of the " + std::to_string(it->size()) + " oneOf schemas");
      if (matched.size() > 1)
        return fail_at(at, "matches oneOf schemas " + std::to_string(matched[0]) + " and " +
                               std::to_string(matched[1]) + ", expected exactly one");
    }
    if (auto it = s.find("not"); it != s.end()) {
      bool matched = validate(*it, v, at, ref_depth);
      if (aborted_) return false;
      if (matched) return fail_at(at, "must not match the \"not\" schema");
    }
    return true;
  }

  bool child(const json& schema, const json& v, std::string& at, const std::string& segment,
             size_t ref_depth) {
    size_t mark = at.size();
    at += "/" + segment;
    bool ok = validate(schema, v, at, ref_depth);
    at.resize(mark);
    return ok;
  }

  const json& root_;
  SchemaLimits limits_;
  size_t visits_ = 0;
  bool aborted_ = false;
  std::string error_;
  size_t pattern_steps_ = 0;
  std::map<const json*, Regex> regexes_;
};

}  // namespace

std::string_view supported_schema_keywords() { return kKeywords; }

std::string pointer_segment(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out.push_back(c);
  }
  return out;
}

Status check_schema(const json& schema) {
  std::string at;
  return SchemaChecker(schema).check(schema, at, 0);
}

Status validate_json(const json& schema, const json& instance, const SchemaLimits& limits) {
  Validator validator(schema, limits);
  std::string at;
  if (validator.validate(schema, instance, at, 0)) return {};
  return fail(validator.error());
}

Result<json> parse_json_document(std::string_view text, size_t max_depth) {
  if (!nesting_within(text, max_depth))
    return fail("nested deeper than " + std::to_string(max_depth) + " levels");
  // A key twice in one object: parsers disagree on which value counts (most keep the last, some
  // the first, some refuse), so the value validated might not be the one a consumer reads.
  std::vector<std::set<std::string>> keys;
  std::optional<std::string> twice;
  auto watch = [&](int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) keys.emplace_back();
    else if (event == json::parse_event_t::object_end && !keys.empty()) keys.pop_back();
    else if (event == json::parse_event_t::key && !keys.empty() && !twice && parsed.is_string() &&
             !keys.back().insert(parsed.get<std::string>()).second)
      twice = parsed.get<std::string>();
    return true;
  };
  try {
    json doc = json::parse(text, watch);
    if (twice)
      return fail("key " + in_quotes(*twice, 100) +
                  " appears twice in one object (readers disagree on which value counts)");
    return doc;
  } catch (const json::exception& e) {
    std::string what = e.what();
    if (auto close = what.find("] "); what.starts_with("[json.exception") && close != std::string::npos)
      what = what.substr(close + 2);
    return fail("not valid JSON: " + printable(what, 300));
  }
}

}  // namespace airlock::validate
