# case: output-many-files
# why: 100k files in /output must hit the output count policy, not hang collection
# args: --timeout 60
# expect-outcome: output_rejected
# expect-limit: output_count
# expect-stdout: PLANTED
import errno, os
n = 0
try:
    for n in range(100000):
        os.close(os.open("/output/f%06d" % n, os.O_WRONLY | os.O_CREAT, 0o644))
    n = 100000
    print("PLANTED", n, "files")
except OSError as e:
    print("PLANTED", n, "files, then", errno.errorcode.get(e.errno, e.errno))
