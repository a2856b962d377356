# The Python that a session's sandbox runs (src/sessions/keeper.py, kernel.py),
# tested on its own with Debian's pytest (scripts/test-setup/40-pysdk.sh), no
# root, no sandbox: each test starts the keeper as a child and ends it by pid.
foreach(sessions_py_file kernel keeper kernel_requests)
  add_test(NAME SessionPython.${sessions_py_file}
           COMMAND /bin/sh -c "/usr/bin/python3 -c 'import pytest' 2>/dev/null || { echo 'python3-pytest is not installed (scripts/test-setup/40-pysdk.sh)'; exit 77; }; cd \"$1\" && exec /usr/bin/python3 -m pytest -q -p no:cacheprovider \"$0\"" ${CMAKE_CURRENT_LIST_DIR}/test_${sessions_py_file}.py ${CMAKE_CURRENT_LIST_DIR})
  set_tests_properties(SessionPython.${sessions_py_file} PROPERTIES
    ENVIRONMENT "AIRLOCK_SOURCE_DIR=${CMAKE_SOURCE_DIR};PYTHONDONTWRITEBYTECODE=1"
    SKIP_RETURN_CODE 77 TIMEOUT 300)
endforeach()
