# case: host-identity
# why: the sandbox has its own UTS namespace: the host's hostname is not visible (the runner forbids it in the record)
# expect-outcome: succeeded
# expect-stdout: BLOCKED own hostname
# forbid-record: hostname=[{host_hostname}]
import os, socket
names = {"uname": os.uname().nodename, "gethostname": socket.gethostname()}
try:
    names["/etc/hostname"] = open("/etc/hostname").read().strip()
except OSError:
    pass
for k, v in names.items():
    print("%s: hostname=[%s]" % (k, v))
print("BLOCKED own hostname" if len(set(names.values())) == 1 else "MISMATCH %s" % names)
