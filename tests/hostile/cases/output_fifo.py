# case: output-fifo
# why: a fifo in /output would block a reader forever: refused without opening it
# expect-outcome: output_rejected
# expect-output: pipe rejected fifo
import os
os.mkfifo("/output/pipe")
print("PLANTED fifo")
