# case: dev-minimal
# why: /dev holds only null, zero, full, random, urandom, tty (plus shm, fd links): no disks, no /dev/mem, no kmsg
# expect-outcome: succeeded
# expect-stdout: BLOCKED minimal /dev
import os, stat
allowed = {"null", "zero", "full", "random", "urandom", "tty"}
extra = []
for root, dirs, files in os.walk("/dev"):
    for name in dirs + files:
        p = os.path.join(root, name)
        try:
            st = os.lstat(p)
        except OSError:
            continue
        if (stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode)) and not (root == "/dev" and name in allowed):
            extra.append("%s (%d:%d)" % (p, os.major(st.st_rdev), os.minor(st.st_rdev)))
    dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(root, d))]
print("/dev:", sorted(os.listdir("/dev")))
print("ESCAPED device nodes: %s" % extra if extra else "BLOCKED minimal /dev")
