# case: output-hardlink
# why: a hardlink passes every openat2 RESOLVE flag; st_nlink must be checked (linking an input must fail too)
# expect-outcome: output_rejected
# expect-stdout: link input EXDEV|link input EPERM|link input EROFS
# expect-output: linked.txt rejected link
import errno, os
try:
    os.link("/inputs/output_hardlink.py", "/output/input-link.py")
    print("link input LINKED")
except OSError as e:
    print("link input", errno.errorcode.get(e.errno, e.errno))
with open("/output/orig.txt", "w") as f:
    f.write("original\n")
os.link("/output/orig.txt", "/output/linked.txt")
print("PLANTED hardlink /output/linked.txt")
