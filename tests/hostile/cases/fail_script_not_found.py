# case: fail-script-not-found
# why: a command whose script does not exist is the user's failure (python3 exits 2), not a sandbox error
# command: python3 /inputs/missing.py
# expect-outcome: failed
# expect-exit: 2
# expect-stderr: can't open file
# This file is only the case's header; the command above runs instead of it.
