# case: fail-import-error
# why: an ordinary error in the code is outcome failed with its exit code, not a sandbox error
# expect-outcome: failed
# expect-exit: 1
# expect-stderr: ModuleNotFoundError
import airlock_hostile_no_such_module  # noqa: F401
