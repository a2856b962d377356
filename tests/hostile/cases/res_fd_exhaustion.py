# case: res-fd-exhaustion
# why: open files are bounded (RLIMIT_NOFILE, not raisable past its hard limit); opening stops at EMFILE
# expect-outcome: succeeded
# expect-stdout: BLOCKED EMFILE
import errno, os, resource
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
print("RLIMIT_NOFILE", soft, hard)
try:
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
except (ValueError, OSError) as e:
    print("raise soft to hard:", e)
fds = []
verdict = "ESCAPED opened 65536 files"
try:
    while len(fds) < 65536:
        fds.append(os.open("/dev/null", os.O_RDONLY))
except OSError as e:
    verdict = "BLOCKED %s after %d files" % (errno.errorcode.get(e.errno, e.errno), len(fds))
for fd in fds:
    os.close(fd)
print(verdict)
