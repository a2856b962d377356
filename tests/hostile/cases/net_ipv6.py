# case: net-ipv6
# why: IPv6 is contained too: the host's [::1] listener is unreachable, and there is no route out (UDP connect sends nothing)
# setup: tcp-listener
# expect-outcome: succeeded
# expect-stdout: tcp ::1 ECONNREFUSED|tcp ::1 ENETUNREACH|tcp ::1 EADDRNOTAVAIL|tcp ::1 EAFNOSUPPORT
# expect-stdout: udp 2001:db8::1 ENETUNREACH|udp 2001:db8::1 EAFNOSUPPORT
# expect-stdout: BLOCKED ipv6
# compute-why: compute denies socket() (EPERM) before any route matters
# compute-expect-outcome: succeeded
# compute-expect-stdout: tcp ::1 EPERM
# compute-expect-stdout: udp 2001:db8::1 EPERM
# compute-expect-stdout: BLOCKED ipv6
import errno, os, socket
def en(e): return errno.errorcode.get(e, str(e))
escaped = []
port = int(os.environ.get("HOSTILE_TCP6_PORT", os.environ["HOSTILE_TCP_PORT"]))
try:
    s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect(("::1", port))
    escaped.append("tcp [::1]:%d" % port)
    print("tcp ::1 CONNECTED")
except OSError as e:
    print("tcp ::1", en(e.errno))
try:
    u = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    u.connect(("2001:db8::1", 53))  # documentation prefix; connect() on UDP only picks a route
    escaped.append("route to 2001:db8::1 via %s" % (u.getsockname()[0],))
    print("udp 2001:db8::1 ROUTED")
except OSError as e:
    print("udp 2001:db8::1", en(e.errno))
print("ESCAPED " + "; ".join(escaped) if escaped else "BLOCKED ipv6")
