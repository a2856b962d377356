# The TypeScript SDK (sdk/typescript) with node's test runner, against a real `airlock serve` on
# loopback that each file starts. Built by scripts/test-setup/30-tssdk.sh; skipped without it.
set(_tssdk_dir ${CMAKE_CURRENT_LIST_DIR})
file(GLOB _tssdk_tests CONFIGURE_DEPENDS ${_tssdk_dir}/*.test.mjs)
foreach(_file IN LISTS _tssdk_tests)
  get_filename_component(_name ${_file} NAME_WE)
  add_test(NAME TsSdk.${_name} COMMAND ${_tssdk_dir}/run.sh ${_file})
  set_tests_properties(TsSdk.${_name} PROPERTIES
    ENVIRONMENT "AIRLOCK_BINARY=$<TARGET_FILE:airlock>"
    SKIP_RETURN_CODE 77 TIMEOUT 900)
endforeach()
