# deploy/kubernetes (its README.md): the manifests validated offline (node's
# test runner, the checkers pinned by scripts/test-setup/60-k8s.sh), the
# airlock flags and keys they use, the start scripts, and the worker's
# privileges tried on this host (root).
add_test(NAME k8s.validate COMMAND ${CMAKE_CURRENT_LIST_DIR}/run_suite.sh validate.test.mjs)
add_test(NAME k8s.flags COMMAND ${CMAKE_CURRENT_LIST_DIR}/run_suite.sh flags.test.mjs)
set_tests_properties(k8s.validate k8s.flags PROPERTIES
  ENVIRONMENT "AIRLOCK_BINARY=$<TARGET_FILE:airlock>"
  SKIP_RETURN_CODE 77
  TIMEOUT 300)
