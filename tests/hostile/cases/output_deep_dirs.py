# case: output-deep-dirs
# why: 10k nested directories must hit the depth policy without recursion trouble
# expect-outcome: output_rejected
# expect-limit: output_depth
# expect-stdout: PLANTED
import errno, os
os.chdir("/output")
depth = 0
try:
    for depth in range(10000):
        os.mkdir("d")
        os.chdir("d")
    depth = 10000
    with open("leaf.txt", "w") as f:
        f.write("deep\n")
    print("PLANTED", depth, "levels")
except OSError as e:
    print("PLANTED", depth, "levels, then", errno.errorcode.get(e.errno, e.errno))
