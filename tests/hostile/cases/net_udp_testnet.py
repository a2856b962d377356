# case: net-udp-testnet
# why: no IPv4 route leaves the sandbox (UDP connect to TEST-NET 192.0.2.1 picks a route and sends nothing)
# expect-outcome: succeeded
# expect-stdout: BLOCKED ENETUNREACH
# compute-why: compute denies socket() (EPERM)
# compute-expect-outcome: failed
# compute-expect-stderr: PermissionError: [Errno 1] Operation not permitted
import errno, socket
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    u.connect(("192.0.2.1", 53))
    print("ESCAPED route to 192.0.2.1 from", u.getsockname()[0])
except OSError as e:
    print("BLOCKED", errno.errorcode.get(e.errno, e.errno), "192.0.2.1:53")
