# case: output-sparse-1tb
# why: a 1 TB sparse file costs nothing to make; its size alone must refuse it
# expect-outcome: output_rejected
# expect-output: big.bin rejected size
# expect-limit: output_size
with open("/output/big.bin", "wb") as f:
    f.truncate(1 << 40)
print("PLANTED 1 TB sparse file")
