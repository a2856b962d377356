# case: output-name-255
# why: a 255-byte name (legal on Linux) is over the 128-byte name policy
# expect-outcome: output_rejected
# expect-output: xxxxxxxxxx rejected name
with open("/output/" + "x" * 251 + ".txt", "w") as f:
    f.write("x\n")
print("PLANTED 255-byte name")
