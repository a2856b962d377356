#include "pool/preload_choice.h"

#include <gtest/gtest.h>

namespace airlock::jobs {
namespace {

using Modules = std::set<std::string>;

TEST(PreloadChoice, ImportStatementsGiveTheirTopLevelModules) {
  auto scan = scan_imports(
      "import os.path, sys as system\n"
      "from collections.abc import Mapping\n"
      "import pandas as pd; import matplotlib.pyplot as plt\n"
      "if True: import json\n"
      "from xml.etree import (ElementTree,\n"
      "    ElementInclude)\n");
  EXPECT_EQ(scan.modules, (Modules{"os", "sys", "collections", "pandas", "matplotlib", "json", "xml"}));
  EXPECT_FALSE(scan.dynamic);
}

TEST(PreloadChoice, CommentsAndStringsAreNotImports) {
  auto scan = scan_imports(
      "# import pandas\n"
      "s = 'import numpy'\n"
      "t = \"\"\"\nimport scipy\n\"\"\"\n"
      "u = r'from torch import x'\n"
      "print(s, t, u)  # from sklearn import y\n");
  EXPECT_TRUE(scan.modules.empty());
  EXPECT_FALSE(scan.dynamic);
}

TEST(PreloadChoice, FromOutsideAnImportAndRelativeImportsAddNothing) {
  auto scan = scan_imports(
      "def g():\n    yield from range(3)\n"
      "try:\n    pass\nexcept ValueError as e:\n    raise KeyError('x') from e\n"
      "from . import helpers\n"
      "from ..pkg.mod import thing\n");
  EXPECT_TRUE(scan.modules.empty());
}

TEST(PreloadChoice, ImportsNotWrittenAsStatementsMakeTheSourceDynamic) {
  EXPECT_TRUE(scan_imports("m = __import__('pandas')").dynamic);
  EXPECT_TRUE(scan_imports("import importlib\nimportlib.import_module('numpy')").dynamic);
  EXPECT_TRUE(scan_imports("exec('import pandas')").dynamic);
  EXPECT_TRUE(scan_imports("print(f\"{__import__('numpy').pi}\")").dynamic);
  EXPECT_FALSE(scan_imports("import re\nre.compile('x')\nobj.exec()").dynamic);
}

TEST(PreloadChoice, OnlyStandardModulesStartFromTheStandardLibrarysInterpreter) {
  EXPECT_EQ(preload_for_source("print(1)"), Preload::kStdlib);
  EXPECT_EQ(preload_for_source(""), Preload::kStdlib);
  EXPECT_EQ(preload_for_source("from __future__ import annotations\nimport json, csv, _thread\n"),
            Preload::kStdlib);
  EXPECT_EQ(preload_for_source("import json\nimport pandas as pd\n"), Preload::kData);
  EXPECT_EQ(preload_for_source("import requests"), Preload::kData);  // not known: the larger one
  EXPECT_EQ(preload_for_source("__import__('json')"), Preload::kData);
}

TEST(PreloadChoice, TheStandardModuleListIsPythonsAndThePreloadUsesOnlyIt) {
  for (const char* m : {"os", "sys", "json", "asyncio", "zoneinfo", "cProfile", "__future__", "_io"})
    EXPECT_TRUE(is_stdlib_module(m)) << m;
  for (const char* m : {"numpy", "pandas", "matplotlib", "requests", "Os", "", "os.path"})
    EXPECT_FALSE(is_stdlib_module(m)) << m;
  for (const auto& m : stdlib_preload_modules())
    EXPECT_TRUE(is_stdlib_module(m.substr(0, m.find('.')))) << m;
}

TEST(PreloadChoice, TruncatedAndHostileSourceIsReadToItsEndAndNoFurther) {
  // Unclosed strings and statements cut short end the scan at the source's end.
  const std::pair<const char*, Modules> cases[] = {
      {"'", {}},           {"\"\"\"import os", {}},  {"r'import os", {}},     {"f\"{", {}},
      {"import", {}},      {"from", {}},             {"from x", {}},          {"import a.", {"a"}},
      {"import a as", {"a"}}, {"import a,", {"a"}},  {"from . import", {}},   {"\\", {}},
      {"#", {}},           {"'\\", {}},             {"\xff\xfe import os", {"os"}},
      {"x = 'a\nimport os", {"os"}},  // a one-line string ends at its line's end
  };
  for (const auto& [source, modules] : cases) EXPECT_EQ(scan_imports(source).modules, modules) << source;
  std::string deep(100000, '(');
  EXPECT_EQ(scan_imports(deep + "import os").modules, (Modules{"os"}));
}

}  // namespace
}  // namespace airlock::jobs
