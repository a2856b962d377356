# case: proc-other-processes
# why: /proc shows only the job's own processes; no other process's environ/cmdline is readable
# expect-outcome: succeeded
# expect-stdout: BLOCKED own processes only
import os
me = os.getpid()
pids = sorted(int(n) for n in os.listdir("/proc") if n.isdigit())
print("visible pids:", pids[:50], "count", len(pids))
foreign = []
readable_env = []
for p in pids:
    try:
        with open("/proc/%d/status" % p) as f:
            st = dict(l.split(":", 1) for l in f if ":" in l)
        uid = st.get("Uid", "").split()
        name = st.get("Name", "").strip()
    except OSError:
        continue
    if uid and uid[0] != str(os.getuid()):
        foreign.append((p, name, uid[0]))
    if p != me:
        try:
            with open("/proc/%d/environ" % p, "rb") as f:
                env = f.read()
            if env:
                readable_env.append((p, name, len(env)))
        except OSError:
            pass
try:
    with open("/proc/1/environ", "rb") as f:
        pid1 = "read %d bytes" % len(f.read())
except OSError as e:
    import errno
    pid1 = errno.errorcode.get(e.errno, str(e.errno))
print("pid 1 environ:", pid1, "(I am pid %d)" % me)
if len(pids) > 8 or foreign or readable_env or (me != 1 and pid1.startswith("read") and pid1 != "read 0 bytes"):
    print("ESCAPED saw", len(pids), "processes; foreign:", foreign[:5], "environ readable:", readable_env[:5])
else:
    print("BLOCKED own processes only (%d visible, pid1 environ %s)" % (len(pids), pid1))
