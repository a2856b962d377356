# The dashboard (docs/dashboard.md) in Debian's chromium, driven by
# puppeteer-core (pinned in package-lock.json, installed by
# scripts/test-setup/50-ui.sh). Screenshots land in <build>/ui-artifacts.
add_test(NAME ui.dashboard
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/run_suite.sh ${CMAKE_CURRENT_LIST_DIR} dashboard.test.mjs)
set_tests_properties(ui.dashboard PROPERTIES
  ENVIRONMENT "AIRLOCK_BINARY=$<TARGET_FILE:airlock>;AIRLOCK_UI_ARTIFACTS=${CMAKE_BINARY_DIR}/ui-artifacts"
  SKIP_RETURN_CODE 77
  TIMEOUT 300)
