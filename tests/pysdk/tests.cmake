# The Python SDK suite (sdk/python) with Debian's pytest, against a real
# `airlock serve` on loopback that the tests start. scripts/test-setup/40-pysdk.sh
# installs pytest and python3-venv; without pytest every entry skips (77).
foreach(pysdk_file operations streams errors install example data_requests)
  add_test(NAME PySdk.${pysdk_file}
           COMMAND /bin/sh -c "/usr/bin/python3 -c 'import pytest' 2>/dev/null || { echo 'python3-pytest is not installed (scripts/test-setup/40-pysdk.sh)'; exit 77; }; exec /usr/bin/python3 -m pytest -q -p no:cacheprovider \"$0\"" ${CMAKE_CURRENT_LIST_DIR}/test_${pysdk_file}.py)
  set_tests_properties(PySdk.${pysdk_file} PROPERTIES
    ENVIRONMENT "AIRLOCK_BINARY=$<TARGET_FILE:airlock>;AIRLOCK_SOURCE_DIR=${CMAKE_SOURCE_DIR};PYTHONDONTWRITEBYTECODE=1"
    SKIP_RETURN_CODE 77 TIMEOUT 600)
endforeach()
