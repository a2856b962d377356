# case: net-interfaces
# why: the sandbox has no network device but loopback
# expect-outcome: succeeded
# expect-stdout: BLOCKED only lo
# compute-why: compute denies socket() for every family, netlink too (EPERM)
# compute-expect-outcome: failed
# compute-expect-stderr: PermissionError: [Errno 1] Operation not permitted
import socket
names = sorted(n for _, n in socket.if_nameindex())
with open("/proc/net/dev") as f:
    dev = sorted(l.split(":")[0].strip() for l in f.readlines()[2:])
print("if_nameindex:", names, "/proc/net/dev:", dev)
print("BLOCKED only lo" if names == ["lo"] and dev == ["lo"] else "ESCAPED interfaces %s %s" % (names, dev))
