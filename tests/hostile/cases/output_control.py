# case: output-control
# why: positive control for the output cases: ordinary files are accepted and copied out intact
# expect-outcome: succeeded
# expect-collected: result.csv
# expect-collected: sub/notes.txt
# expect-stdout: WROTE
import os
with open("/output/result.csv", "w") as f:
    f.write("city,temperature\nOslo,3\nLima,19\n")
os.makedirs("/output/sub")
with open("/output/sub/notes.txt", "w") as f:
    f.write("two cities\n")
print("WROTE result.csv sub/notes.txt")
