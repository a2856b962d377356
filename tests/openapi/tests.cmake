# docs/openapi.json passes `redocly lint` (docs/redocly.yaml) with no error and no warning.
add_test(NAME OpenApi.RedoclyLint COMMAND ${CMAKE_CURRENT_LIST_DIR}/lint.sh)
set_tests_properties(OpenApi.RedoclyLint PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120)
