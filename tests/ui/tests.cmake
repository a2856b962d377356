# The dashboard (docs/dashboard.md) in Debian's chromium, driven by
# puppeteer-core (pinned in package-lock.json, installed by
# scripts/test-setup/50-ui.sh). Screenshots land in <build>/ui-artifacts.
add_test(NAME ui.dashboard
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/run_suite.sh ${CMAKE_CURRENT_LIST_DIR} dashboard.test.mjs)
set_tests_properties(ui.dashboard PROPERTIES
  ENVIRONMENT "AIRLOCK_BINARY=$<TARGET_FILE:airlock>;AIRLOCK_UI_ARTIFACTS=${CMAKE_BINARY_DIR}/ui-artifacts"
  SKIP_RETURN_CODE 77
  TIMEOUT 300)
# ui/text.js and ui/sse.js, the pure modules, in node alone (no browser).
add_test(NAME ui.pure
         COMMAND sh -c "command -v node >/dev/null || { echo 'SKIP: node is not installed'; exit 77; }; exec node --test --test-reporter=spec pure.test.mjs"
         WORKING_DIRECTORY ${CMAKE_CURRENT_LIST_DIR})
set_tests_properties(ui.pure PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 60)
