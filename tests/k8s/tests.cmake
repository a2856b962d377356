# deploy/kubernetes (its README.md): the manifests validated offline (node's
# test runner, the checkers pinned by scripts/test-setup/60-k8s.sh), the
# airlock flags and keys they use, the start script, and the worker's
# privileges tried on this host in a container-like mount namespace and in a
# real runc container (root).
foreach(suite validate flags start_script)
  add_test(NAME k8s.${suite} COMMAND ${CMAKE_CURRENT_LIST_DIR}/run_suite.sh ${suite}.test.mjs)
  set_tests_properties(k8s.${suite} PROPERTIES
    ENVIRONMENT "AIRLOCK_BINARY=$<TARGET_FILE:airlock>"
    SKIP_RETURN_CODE 77
    TIMEOUT 300)
endforeach()
add_test(NAME k8s.worker_privileges COMMAND ${CMAKE_CURRENT_LIST_DIR}/worker_privileges.sh)
add_test(NAME k8s.oci_worker COMMAND ${CMAKE_CURRENT_LIST_DIR}/oci_worker.sh)
set_tests_properties(k8s.worker_privileges k8s.oci_worker PROPERTIES
  ENVIRONMENT "AIRLOCK_BINARY=$<TARGET_FILE:airlock>"
  SKIP_RETURN_CODE 77
  TIMEOUT 300)
