#include "pool/preload_choice.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace airlock::jobs {
namespace {

// Python 3.11's sys.stdlib_module_names, sorted. Images with another 3.x
// differ in a few names; a wrong answer only picks the other interpreter.
constexpr std::array<std::string_view, 305> kStdlib = {
    "__future__", "_abc", "_aix_support", "_ast", "_asyncio", "_bisect", "_blake2",
    "_bootsubprocess", "_bz2", "_codecs", "_codecs_cn", "_codecs_hk", "_codecs_iso2022",
    "_codecs_jp", "_codecs_kr", "_codecs_tw", "_collections", "_collections_abc", "_compat_pickle",
    "_compression", "_contextvars", "_crypt", "_csv", "_ctypes", "_curses", "_curses_panel",
    "_datetime", "_dbm", "_decimal", "_elementtree", "_frozen_importlib",
    "_frozen_importlib_external", "_functools", "_gdbm", "_hashlib", "_heapq", "_imp", "_io",
    "_json", "_locale", "_lsprof", "_lzma", "_markupbase", "_md5", "_msi", "_multibytecodec",
    "_multiprocessing", "_opcode", "_operator", "_osx_support", "_overlapped", "_pickle",
    "_posixshmem", "_posixsubprocess", "_py_abc", "_pydecimal", "_pyio", "_queue", "_random",
    "_scproxy", "_sha1", "_sha256", "_sha3", "_sha512", "_signal", "_sitebuiltins", "_socket",
    "_sqlite3", "_sre", "_ssl", "_stat", "_statistics", "_string", "_strptime", "_struct",
    "_symtable", "_thread", "_threading_local", "_tkinter", "_tokenize", "_tracemalloc", "_typing",
    "_uuid", "_warnings", "_weakref", "_weakrefset", "_winapi", "_zoneinfo", "abc", "aifc",
    "antigravity", "argparse", "array", "ast", "asynchat", "asyncio", "asyncore", "atexit",
    "audioop", "base64", "bdb", "binascii", "bisect", "builtins", "bz2", "cProfile", "calendar",
    "cgi", "cgitb", "chunk", "cmath", "cmd", "code", "codecs", "codeop", "collections", "colorsys",
    "compileall", "concurrent", "configparser", "contextlib", "contextvars", "copy", "copyreg",
    "crypt", "csv", "ctypes", "curses", "dataclasses", "datetime", "dbm", "decimal", "difflib",
    "dis", "distutils", "doctest", "email", "encodings", "ensurepip", "enum", "errno",
    "faulthandler", "fcntl", "filecmp", "fileinput", "fnmatch", "fractions", "ftplib", "functools",
    "gc", "genericpath", "getopt", "getpass", "gettext", "glob", "graphlib", "grp", "gzip",
    "hashlib", "heapq", "hmac", "html", "http", "idlelib", "imaplib", "imghdr", "imp", "importlib",
    "inspect", "io", "ipaddress", "itertools", "json", "keyword", "lib2to3", "linecache", "locale",
    "logging", "lzma", "mailbox", "mailcap", "marshal", "math", "mimetypes", "mmap", "modulefinder",
    "msilib", "msvcrt", "multiprocessing", "netrc", "nis", "nntplib", "nt", "ntpath", "nturl2path",
    "numbers", "opcode", "operator", "optparse", "os", "ossaudiodev", "pathlib", "pdb", "pickle",
    "pickletools", "pipes", "pkgutil", "platform", "plistlib", "poplib", "posix", "posixpath",
    "pprint", "profile", "pstats", "pty", "pwd", "py_compile", "pyclbr", "pydoc", "pydoc_data",
    "pyexpat", "queue", "quopri", "random", "re", "readline", "reprlib", "resource", "rlcompleter",
    "runpy", "sched", "secrets", "select", "selectors", "shelve", "shlex", "shutil", "signal",
    "site", "smtpd", "smtplib", "sndhdr", "socket", "socketserver", "spwd", "sqlite3",
    "sre_compile", "sre_constants", "sre_parse", "ssl", "stat", "statistics", "string",
    "stringprep", "struct", "subprocess", "sunau", "symtable", "sys", "sysconfig", "syslog",
    "tabnanny", "tarfile", "telnetlib", "tempfile", "termios", "textwrap", "this", "threading",
    "time", "timeit", "tkinter", "token", "tokenize", "tomllib", "trace", "traceback",
    "tracemalloc", "tty", "turtle", "turtledemo", "types", "typing", "unicodedata", "unittest",
    "urllib", "uu", "uuid", "venv", "warnings", "wave", "weakref", "webbrowser", "winreg",
    "winsound", "wsgiref", "xdrlib", "xml", "xmlrpc", "zipapp", "zipfile", "zipimport", "zlib",
    "zoneinfo",
};
static_assert(std::is_sorted(kStdlib.begin(), kStdlib.end()));

bool ident_start(unsigned char c) { return std::isalpha(c) || c == '_' || c >= 0x80; }
bool ident_char(unsigned char c) { return ident_start(c) || std::isdigit(c); }
bool is_ident(std::string_view t) { return !t.empty() && ident_start(static_cast<unsigned char>(t[0])); }

bool string_prefix(std::string_view word) {
  std::string lower;
  for (char c : word) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower == "r" || lower == "u" || lower == "f" || lower == "b" || lower == "rb" || lower == "br" ||
         lower == "fr" || lower == "rf";
}

// The source's tokens that matter here: identifiers and single punctuation
// characters; whitespace, comments and string literals are skipped (a string
// that names __import__ or importlib, an f-string's expression say, marks the
// source dynamic).
class Lexer {
 public:
  explicit Lexer(std::string_view s) : s_(s) {}
  bool dynamic = false;

  std::string_view peek() {
    if (!peeked_) {
      next_ = read();
      peeked_ = true;
    }
    return next_;
  }
  std::string_view next() {
    std::string_view t = peek();
    peeked_ = false;
    return t;
  }

 private:
  std::string_view read() {
    while (i_ < s_.size()) {
      unsigned char c = static_cast<unsigned char>(s_[i_]);
      if (std::isspace(c) || c == '\\') {
        ++i_;
      } else if (c == '#') {
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
      } else if (c == '\'' || c == '"') {
        skip_string();
      } else if (ident_start(c)) {
        size_t start = i_;
        while (i_ < s_.size() && ident_char(static_cast<unsigned char>(s_[i_]))) ++i_;
        std::string_view word = s_.substr(start, i_ - start);
        if (i_ < s_.size() && (s_[i_] == '\'' || s_[i_] == '"') && string_prefix(word)) {
          skip_string();
          continue;
        }
        return word;
      } else {
        return s_.substr(i_++, 1);
      }
    }
    return {};
  }

  // From the opening quote at i_ to past the closing one (or the end).
  void skip_string() {
    char q = s_[i_];
    bool triple = s_.substr(i_, 3) == std::string(3, q);
    size_t start = i_;
    i_ += triple ? 3 : 1;
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (c == '\\') {
        i_ += 2;
      } else if (triple ? s_.substr(i_, 3) == std::string(3, q) : c == q) {
        i_ += triple ? 3 : 1;
        break;
      } else if (!triple && c == '\n') {
        break;  // not closed on its line: a syntax error the job will report
      } else {
        ++i_;
      }
    }
    std::string_view body = s_.substr(start, std::min(i_, s_.size()) - start);
    if (body.find("__import__") != std::string_view::npos || body.find("importlib") != std::string_view::npos)
      dynamic = true;
  }

  std::string_view s_;
  size_t i_ = 0;
  bool peeked_ = false;
  std::string_view next_;
};

// A dotted name's first part; the rest of it is consumed. "" if none.
std::string_view dotted_name(Lexer& lex) {
  if (!is_ident(lex.peek())) return {};
  std::string_view first = lex.next();
  while (lex.peek() == ".") {
    lex.next();
    if (is_ident(lex.peek())) lex.next();
  }
  return first;
}

}  // namespace

std::string_view preload_name(Preload p) { return p == Preload::kStdlib ? "stdlib" : "data"; }

const std::vector<std::string>& stdlib_preload_modules() {
  // What short scripts use most; each is cheap to import and small in memory.
  // Not subprocess: it imports threading, whose fork handler alone made a
  // job's fork of this interpreter write 130 more of its pages (248 against
  // 115 faults after the fork; docs/performance.md), each a copy; a job that
  // starts programs pays its import instead.
  static const std::vector<std::string> modules = {
      "argparse", "base64",   "collections", "copy",       "csv",     "dataclasses", "datetime",
      "decimal",  "enum",     "fractions",   "functools",  "hashlib", "heapq",       "io",
      "itertools", "json",    "math",        "operator",   "os",      "pathlib",     "pprint",
      "random",   "re",       "shutil",      "statistics", "string",  "struct",      "tempfile",
      "textwrap", "time",     "typing",      "urllib.parse", "uuid"};
  return modules;
}

bool is_stdlib_module(std::string_view top_level) {
  return std::binary_search(kStdlib.begin(), kStdlib.end(), top_level);
}

ImportScan scan_imports(std::string_view source) {
  ImportScan scan;
  Lexer lex(source);
  std::string_view prev;
  for (std::string_view t = lex.next(); !t.empty(); prev = t, t = lex.next()) {
    if (t == "import") {
      // import a.b [as c] [, d ...]
      for (;;) {
        std::string_view name = dotted_name(lex);
        if (name.empty()) break;
        scan.modules.insert(std::string(name));
        if (lex.peek() == "as") {
          lex.next();
          if (is_ident(lex.peek())) lex.next();
        }
        if (lex.peek() != ",") break;
        lex.next();
      }
    } else if (t == "from") {
      // from a.b import ...; from . import x (relative: the job's own); `yield from`
      // and `raise E from e` have no `import` after the name and add nothing.
      if (lex.peek() == ".") {
        while (lex.peek() == ".") lex.next();
        (void)dotted_name(lex);
        if (lex.peek() == "import") lex.next();
        continue;
      }
      std::string_view name = dotted_name(lex);
      if (!name.empty() && lex.peek() == "import") {
        lex.next();
        scan.modules.insert(std::string(name));
      }
    } else if (t == "__import__" || t == "importlib" || ((t == "exec" || t == "eval") && prev != ".")) {
      scan.dynamic = true;
    }
  }
  scan.dynamic = scan.dynamic || lex.dynamic;
  return scan;
}

Preload preload_for_source(std::string_view source) {
  ImportScan scan = scan_imports(source);
  if (scan.dynamic) return Preload::kData;
  for (const auto& m : scan.modules)
    if (!is_stdlib_module(m)) return Preload::kData;
  return Preload::kStdlib;
}

}  // namespace airlock::jobs
