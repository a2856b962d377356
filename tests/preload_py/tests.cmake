# The preloaded interpreter's Python (src/sandbox/preload_runner.py and
# preload_warm_up.py), tested on its own with Debian's pytest
# (scripts/test-setup/40-pysdk.sh): no root, no sandbox, each case in a child
# python3 that loads the runner as the interpreter does.
add_test(NAME PreloadPython.runner
         COMMAND /bin/sh -c "/usr/bin/python3 -c 'import pytest' 2>/dev/null || { echo 'python3-pytest is not installed (scripts/test-setup/40-pysdk.sh)'; exit 77; }; cd \"$1\" && exec /usr/bin/python3 -m pytest -q -p no:cacheprovider \"$0\"" ${CMAKE_CURRENT_LIST_DIR}/test_runner.py ${CMAKE_CURRENT_LIST_DIR})
set_tests_properties(PreloadPython.runner PROPERTIES
  ENVIRONMENT "AIRLOCK_SOURCE_DIR=${CMAKE_SOURCE_DIR};PYTHONDONTWRITEBYTECODE=1"
  SKIP_RETURN_CODE 77 TIMEOUT 300)
