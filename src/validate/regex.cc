#include "validate/regex.h"

#include <algorithm>
#include <optional>

#include "validate/text.h"

namespace airlock::validate {
namespace {

constexpr size_t kMaxProgram = 5'000;  // instructions, after expanding {n,m}
constexpr int kMaxRepeat = 1'000;       // largest n or m in {n,m}
constexpr int kMaxNesting = 100;        // groups inside groups
constexpr uint32_t kMaxCodePoint = 0x10FFFF;

using Range = Regex::Range;
using Ranges = std::vector<Range>;

// Decodes UTF-8; an invalid byte stands for itself.
std::vector<uint32_t> code_points(std::string_view s) {
  std::vector<uint32_t> out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    auto b = static_cast<uint8_t>(s[i]);
    size_t len = b < 0x80 ? 1 : (b & 0xE0) == 0xC0 ? 2 : (b & 0xF0) == 0xE0 ? 3 : (b & 0xF8) == 0xF0 ? 4 : 0;
    uint32_t cp = len == 1 ? b : len == 2 ? (b & 0x1F) : len == 3 ? (b & 0x0F) : (b & 0x07);
    bool ok = len > 0 && i + len <= s.size();
    for (size_t k = 1; ok && k < len; ++k) {
      auto c = static_cast<uint8_t>(s[i + k]);
      ok = (c & 0xC0) == 0x80;
      cp = (cp << 6) | (c & 0x3F);
    }
    if (!ok) {
      out.push_back(b);
      ++i;
    } else {
      out.push_back(cp);
      i += len;
    }
  }
  return out;
}

const Ranges kDigit = {{'0', '9'}};
const Ranges kWord = {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};
const Ranges kSpace = {{'\t', '\r'},     {' ', ' '},       {0xA0, 0xA0},     {0x1680, 0x1680},
                       {0x2000, 0x200A}, {0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F},
                       {0x3000, 0x3000}, {0xFEFF, 0xFEFF}};
const Ranges kLineTerminators = {{'\n', '\n'}, {'\r', '\r'}, {0x2028, 0x2029}};

Ranges normalized(Ranges r) {
  std::sort(r.begin(), r.end(), [](Range a, Range b) { return a.lo < b.lo; });
  Ranges out;
  for (Range x : r) {
    if (!out.empty() && x.lo <= out.back().hi + 1)
      out.back().hi = std::max(out.back().hi, x.hi);
    else
      out.push_back(x);
  }
  return out;
}

Ranges complement(const Ranges& in) {
  Ranges r = normalized(in), out;
  uint32_t next = 0;
  for (Range x : r) {
    if (x.lo > next) out.push_back({next, x.lo - 1});
    next = x.hi + 1;
  }
  if (next <= kMaxCodePoint) out.push_back({next, kMaxCodePoint});
  return out;
}

bool in_ranges(const Ranges& r, uint32_t c) {
  for (Range x : r)
    if (c >= x.lo && c <= x.hi) return true;
  return false;
}

bool is_word(uint32_t c) { return in_ranges(kWord, c); }

struct Node {
  enum class Kind { kEmpty, kChar, kAny, kClass, kBol, kEol, kWordB, kNotWordB, kConcat, kAlt, kRepeat };
  Kind kind = Kind::kEmpty;
  uint32_t c = 0;
  Regex::Class cls;
  std::vector<Node> kids;
  int min = 0, max = 0;  // kRepeat; max -1 = unbounded
};

}  // namespace

class RegexCompiler {
 public:
  explicit RegexCompiler(std::string_view pattern) : p_(code_points(pattern)) {}

  Result<Regex> compile() {
    auto root = alternation(0);
    if (!root) return std::unexpected(root.error());
    if (pos_ < p_.size()) return error("unmatched ')'");
    Regex re;
    out_ = &re;
    if (auto s = emit(*root); !s) return std::unexpected(s.error());
    re.program_.push_back({Regex::Op::kMatch});
    return re;
  }

 private:
  std::unexpected<Error> error(const std::string& what) const {
    return fail(what + " at character " + std::to_string(pos_));
  }
  bool at_end() const { return pos_ >= p_.size(); }
  uint32_t peek(size_t ahead = 0) const { return pos_ + ahead < p_.size() ? p_[pos_ + ahead] : 0; }

  Result<Node> alternation(int depth) {
    if (depth > kMaxNesting) return error("groups nested deeper than " + std::to_string(kMaxNesting));
    Node alt{Node::Kind::kAlt};
    while (true) {
      auto c = concatenation(depth);
      if (!c) return c;
      alt.kids.push_back(std::move(*c));
      if (at_end() || peek() != '|') break;
      ++pos_;
    }
    if (alt.kids.size() == 1) return std::move(alt.kids[0]);
    return alt;
  }

  Result<Node> concatenation(int depth) {
    Node seq{Node::Kind::kConcat};
    while (!at_end() && peek() != '|' && peek() != ')') {
      auto atom = this->atom(depth);
      if (!atom) return atom;
      auto q = quantifier();
      if (!q) return std::unexpected(q.error());
      if (*q) {
        Node::Kind k = atom->kind;
        if (k == Node::Kind::kBol || k == Node::Kind::kEol || k == Node::Kind::kWordB ||
            k == Node::Kind::kNotWordB)
          return error("nothing to repeat");
        Node rep{Node::Kind::kRepeat};
        rep.min = (*q)->first;
        rep.max = (*q)->second;
        rep.kids.push_back(std::move(*atom));
        seq.kids.push_back(std::move(rep));
      } else {
        seq.kids.push_back(std::move(*atom));
      }
    }
    return seq;
  }

  // {min, max} (max -1: unbounded), nullopt when no quantifier follows.
  Result<std::optional<std::pair<int, int>>> quantifier() {
    std::optional<std::pair<int, int>> q;
    uint32_t c = peek();
    if (at_end()) return q;
    if (c == '*') q = {0, -1};
    else if (c == '+') q = {1, -1};
    else if (c == '?') q = {0, 1};
    if (q) {
      ++pos_;
    } else if (c == '{') {
      auto braces = counted();
      if (!braces) return std::unexpected(braces.error());
      q = *braces;
      if (!q) return q;  // a literal '{'
    } else {
      return q;
    }
    if (!at_end() && peek() == '?') ++pos_;  // lazy: same yes/no answer
    if (!at_end() && (peek() == '*' || peek() == '+' || peek() == '?' ||
                      (peek() == '{' && looks_counted())))
      return error("nothing to repeat");
    return q;
  }

  bool looks_counted() const {
    size_t i = pos_ + 1;
    size_t digits = 0;
    while (i < p_.size() && p_[i] >= '0' && p_[i] <= '9') ++i, ++digits;
    if (digits == 0) return false;
    if (i < p_.size() && p_[i] == ',') {
      ++i;
      while (i < p_.size() && p_[i] >= '0' && p_[i] <= '9') ++i;
    }
    return i < p_.size() && p_[i] == '}';
  }

  Result<std::optional<std::pair<int, int>>> counted() {
    if (!looks_counted()) return std::optional<std::pair<int, int>>{};
    ++pos_;  // '{'
    auto number = [&]() -> long {
      long n = 0;
      while (peek() >= '0' && peek() <= '9' && !at_end()) {
        n = std::min<long>(n * 10 + (peek() - '0'), 1'000'000'000);
        ++pos_;
      }
      return n;
    };
    long min = number(), max = min;
    if (peek() == ',') {
      ++pos_;
      max = (peek() >= '0' && peek() <= '9') ? number() : -1;
    }
    ++pos_;  // '}'
    if (min > kMaxRepeat || max > kMaxRepeat)
      return error("a repeat count above " + std::to_string(kMaxRepeat));
    if (max != -1 && max < min) return error("numbers out of order in {} quantifier");
    return std::optional<std::pair<int, int>>{{static_cast<int>(min), static_cast<int>(max)}};
  }

  Result<Node> atom(int depth) {
    uint32_t c = peek();
    ++pos_;
    switch (c) {
      case '^': return Node{Node::Kind::kBol};
      case '$': return Node{Node::Kind::kEol};
      case '.': {
        Node n{Node::Kind::kClass};
        n.cls.ranges = normalized(kLineTerminators);
        n.cls.negated = true;
        return n;
      }
      case '*': case '+': case '?': --pos_; return error("nothing to repeat");
      case '{':
        if (looks_counted_from(pos_ - 1)) { --pos_; return error("nothing to repeat"); }
        return Node{Node::Kind::kChar, c};
      case '(': {
        if (peek() == '?') {
          if (peek(1) != ':') return error("lookaround and named groups are not supported");
          pos_ += 2;
        }
        auto inner = alternation(depth + 1);
        if (!inner) return inner;
        if (at_end() || peek() != ')') return error("missing ')'");
        ++pos_;
        return inner;
      }
      case ')': --pos_; return error("unmatched ')'");
      case '[': return bracket();
      case '\\': return escape();
      default: return Node{Node::Kind::kChar, c};
    }
  }

  bool looks_counted_from(size_t at) {
    size_t saved = pos_;
    pos_ = at;
    bool r = looks_counted();
    pos_ = saved;
    return r;
  }

  // After a backslash, outside or inside a class. Sets `ranges` for a class
  // escape (\d ...), else returns the code point.
  Result<uint32_t> escape_char(bool in_class, Ranges* ranges) {
    if (at_end()) return error("'\\' at the end of the pattern");
    uint32_t c = peek();
    ++pos_;
    auto hex = [&](int digits) -> Result<uint32_t> {
      uint32_t v = 0;
      for (int i = 0; i < digits; ++i) {
        uint32_t h = peek();
        if (at_end() || !((h >= '0' && h <= '9') || (h >= 'a' && h <= 'f') || (h >= 'A' && h <= 'F')))
          return error("malformed \\x or \\u escape");
        v = v * 16 + (h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10);
        ++pos_;
      }
      return v;
    };
    switch (c) {
      case 'd': *ranges = kDigit; return 0;
      case 'D': *ranges = complement(kDigit); return 0;
      case 'w': *ranges = kWord; return 0;
      case 'W': *ranges = complement(kWord); return 0;
      case 's': *ranges = kSpace; return 0;
      case 'S': *ranges = complement(kSpace); return 0;
      case 't': return '\t';
      case 'n': return '\n';
      case 'r': return '\r';
      case 'f': return '\f';
      case 'v': return '\v';
      case 'b': if (in_class) return '\b'; break;
      case '0': if (!(peek() >= '0' && peek() <= '9')) return 0; break;
      case 'x': return hex(2);
      case 'u': return hex(4);
      default: break;
    }
    if (c >= '1' && c <= '9') return error("backreferences are not supported");
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
      return error(std::string("unsupported escape \\") + static_cast<char>(c));
    return c;  // identity escape: \. \\ \/ \- \[ ...
  }

  Result<Node> escape() {
    if (peek() == 'b' || peek() == 'B') {
      bool word = peek() == 'b';
      ++pos_;
      return Node{word ? Node::Kind::kWordB : Node::Kind::kNotWordB};
    }
    Ranges ranges;
    auto c = escape_char(false, &ranges);
    if (!c) return std::unexpected(c.error());
    if (!ranges.empty()) {
      Node n{Node::Kind::kClass};
      n.cls.ranges = normalized(ranges);
      return n;
    }
    return Node{Node::Kind::kChar, *c};
  }

  Result<Node> bracket() {
    Node n{Node::Kind::kClass};
    if (peek() == '^' && !at_end()) {
      n.cls.negated = true;
      ++pos_;
    }
    Ranges ranges;
    // One class member: a code point, or a set (from \d and friends).
    auto member = [&](Ranges* set) -> Result<uint32_t> {
      uint32_t c = peek();
      ++pos_;
      if (c == '\\') return escape_char(true, set);
      return c;
    };
    while (true) {
      if (at_end()) return error("missing ']'");
      if (peek() == ']') {
        ++pos_;
        break;
      }
      Ranges set;
      auto lo = member(&set);
      if (!lo) return std::unexpected(lo.error());
      if (!set.empty()) {
        ranges.insert(ranges.end(), set.begin(), set.end());
        continue;
      }
      if (peek() == '-' && pos_ + 1 < p_.size() && peek(1) != ']') {
        ++pos_;
        Ranges hi_set;
        auto hi = member(&hi_set);
        if (!hi) return std::unexpected(hi.error());
        if (!hi_set.empty()) return error("a class escape cannot end a range");
        if (*hi < *lo) return error("range out of order in character class");
        ranges.push_back({*lo, *hi});
      } else {
        ranges.push_back({*lo, *lo});
      }
    }
    n.cls.ranges = normalized(ranges);
    return n;
  }

  Status emit(const Node& n) {
    auto& prog = out_->program_;
    if (prog.size() > kMaxProgram)
      return fail("the pattern is too large (more than " + std::to_string(kMaxProgram) +
                  " instructions once repeats are expanded)");
    using Op = Regex::Op;
    switch (n.kind) {
      case Node::Kind::kEmpty: return {};
      case Node::Kind::kChar: prog.push_back({Op::kChar, n.c}); return {};
      case Node::Kind::kAny: prog.push_back({Op::kAny}); return {};
      case Node::Kind::kClass:
        out_->classes_.push_back(n.cls);
        prog.push_back({Op::kClass, static_cast<uint32_t>(out_->classes_.size() - 1)});
        return {};
      case Node::Kind::kBol: prog.push_back({Op::kBol}); return {};
      case Node::Kind::kEol: prog.push_back({Op::kEol}); return {};
      case Node::Kind::kWordB: prog.push_back({Op::kWordB}); return {};
      case Node::Kind::kNotWordB: prog.push_back({Op::kNotWordB}); return {};
      case Node::Kind::kConcat:
        for (const Node& k : n.kids)
          if (auto s = emit(k); !s) return s;
        return {};
      case Node::Kind::kAlt: {
        std::vector<size_t> jumps;
        for (size_t i = 0; i < n.kids.size(); ++i) {
          size_t split = prog.size();
          bool last = i + 1 == n.kids.size();
          if (!last) prog.push_back({Op::kSplit, static_cast<uint32_t>(split + 1), 0});
          if (auto s = emit(n.kids[i]); !s) return s;
          if (!last) {
            jumps.push_back(prog.size());
            prog.push_back({Op::kJmp});
            prog[split].b = static_cast<uint32_t>(prog.size());
          }
        }
        for (size_t j : jumps) prog[j].a = static_cast<uint32_t>(prog.size());
        return {};
      }
      case Node::Kind::kRepeat: {
        const Node& body = n.kids[0];
        for (int i = 0; i < n.min; ++i)
          if (auto s = emit(body); !s) return s;
        if (n.max == -1) {
          size_t split = prog.size();
          prog.push_back({Op::kSplit, static_cast<uint32_t>(split + 1), 0});
          if (auto s = emit(body); !s) return s;
          prog.push_back({Op::kJmp, static_cast<uint32_t>(split)});
          prog[split].b = static_cast<uint32_t>(prog.size());
          return {};
        }
        std::vector<size_t> splits;
        for (int i = n.min; i < n.max; ++i) {
          splits.push_back(prog.size());
          prog.push_back({Op::kSplit, static_cast<uint32_t>(prog.size() + 1), 0});
          if (auto s = emit(body); !s) return s;
          if (prog.size() > kMaxProgram) break;
        }
        for (size_t s : splits) prog[s].b = static_cast<uint32_t>(prog.size());
        if (prog.size() > kMaxProgram)
          return fail("the pattern is too large (more than " + std::to_string(kMaxProgram) +
                      " instructions once repeats are expanded)");
        return {};
      }
    }
    return {};
  }

  std::vector<uint32_t> p_;
  size_t pos_ = 0;
  Regex* out_ = nullptr;
};

Result<Regex> Regex::compile(std::string_view pattern) { return RegexCompiler(pattern).compile(); }

bool Regex::search(std::string_view text) const {
  const std::vector<uint32_t> s = code_points(text);
  const size_t n = s.size();
  std::vector<size_t> mark(program_.size(), SIZE_MAX);
  std::vector<uint32_t> current, next, stack;
  bool matched = false;

  // Follows empty transitions from pc at position pos, collecting the
  // instructions that consume a character into `list`.
  auto add = [&](std::vector<uint32_t>& list, uint32_t start, size_t pos) {
    stack.push_back(start);
    while (!stack.empty()) {
      uint32_t pc = stack.back();
      stack.pop_back();
      if (mark[pc] == pos) continue;
      mark[pc] = pos;
      const Inst& in = program_[pc];
      switch (in.op) {
        case Op::kJmp: stack.push_back(in.a); break;
        case Op::kSplit: stack.push_back(in.b); stack.push_back(in.a); break;
        case Op::kBol: if (pos == 0) stack.push_back(pc + 1); break;
        case Op::kEol: if (pos == n) stack.push_back(pc + 1); break;
        case Op::kWordB:
        case Op::kNotWordB: {
          bool before = pos > 0 && is_word(s[pos - 1]);
          bool after = pos < n && is_word(s[pos]);
          if ((before != after) == (in.op == Op::kWordB)) stack.push_back(pc + 1);
          break;
        }
        case Op::kMatch: matched = true; break;
        default: list.push_back(pc); break;
      }
    }
  };

  for (size_t pos = 0; pos <= n; ++pos) {
    add(current, 0, pos);  // a match may start at any position
    if (matched) return true;
    if (pos == n) break;
    uint32_t c = s[pos];
    next.clear();
    for (uint32_t pc : current) {
      const Inst& in = program_[pc];
      bool ok = false;
      switch (in.op) {
        case Op::kChar: ok = c == in.a; break;
        case Op::kAny: ok = true; break;
        case Op::kClass: ok = in_ranges(classes_[in.a].ranges, c) != classes_[in.a].negated; break;
        default: break;
      }
      if (ok) add(next, pc + 1, pos + 1);
    }
    if (matched) return true;
    current.swap(next);
  }
  return false;
}

}  // namespace airlock::validate
