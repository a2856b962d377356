# case: output-symlink-input
# why: a symlink to an admitted input is still a symlink: refused
# expect-outcome: output_rejected
# expect-output: copy.py rejected symlink
os = __import__("os")
os.symlink("/inputs/output_symlink_input.py", "/output/copy.py")
print("PLANTED symlink to /inputs/output_symlink_input.py")
