# The MCP server with real clients (docs/mcp.md): node's test runner, the
# pinned @modelcontextprotocol packages installed by scripts/test-setup/30-mcp.sh.
foreach(suite stdio http inspector conformance)
  add_test(NAME mcp.${suite}
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/run_suite.sh ${CMAKE_CURRENT_LIST_DIR} ${suite}.test.mjs)
  set_tests_properties(mcp.${suite} PROPERTIES
    ENVIRONMENT "AIRLOCK_BINARY=$<TARGET_FILE:airlock>"
    SKIP_RETURN_CODE 77
    TIMEOUT 600)
endforeach()
add_test(NAME mcp.agent_example
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/run_suite.sh ${CMAKE_SOURCE_DIR}/examples/agent/mcp agent.test.mjs)
set_tests_properties(mcp.agent_example PROPERTIES
  ENVIRONMENT "AIRLOCK_BINARY=$<TARGET_FILE:airlock>"
  SKIP_RETURN_CODE 77
  TIMEOUT 600)
