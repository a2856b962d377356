# case: output-name-newline
# why: a newline (or other control byte) in a file name must be refused and shown escaped
# expect-outcome: output_rejected
# expect-output: name.txt rejected name
# forbid-record: evil\nname
with open("/output/evil\nname.txt", "w") as f:
    f.write("x\n")
print("PLANTED name with newline")
