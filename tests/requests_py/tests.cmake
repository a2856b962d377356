# The data request helper that jobs and sessions import (src/requests/airlock_request.py),
# tested on its own with Debian's pytest (scripts/test-setup/40-pysdk.sh), no
# root, no sandbox: each test that needs a process starts it and waits for it.
add_test(NAME RequestPython.helper
         COMMAND /bin/sh -c "/usr/bin/python3 -c 'import pytest' 2>/dev/null || { echo 'python3-pytest is not installed (scripts/test-setup/40-pysdk.sh)'; exit 77; }; cd \"$1\" && exec /usr/bin/python3 -m pytest -q -p no:cacheprovider \"$0\"" ${CMAKE_CURRENT_LIST_DIR}/test_airlock_request.py ${CMAKE_CURRENT_LIST_DIR})
set_tests_properties(RequestPython.helper PROPERTIES
  ENVIRONMENT "AIRLOCK_SOURCE_DIR=${CMAKE_SOURCE_DIR};PYTHONDONTWRITEBYTECODE=1"
  SKIP_RETURN_CODE 77 TIMEOUT 120)
