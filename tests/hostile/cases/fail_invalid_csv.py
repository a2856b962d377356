# case: fail-invalid-csv
# why: a malformed admitted CSV makes pandas raise; that is the code's failure (exit 1), reported as failed
# input: bad.csv
# expect-outcome: failed
# expect-exit: 1
# expect-stderr: ParserError
import pandas
print(pandas.read_csv("/inputs/bad.csv"))
