# case: net-raw-socket
# why: raw and packet sockets are denied (no capability, and the filter refuses them)
# expect-outcome: succeeded
# expect-stdout: BLOCKED raw sockets EPERM
import errno, socket
res = {}
for name, fam, typ, proto in (("raw-icmp", socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP),
                              ("raw-ip6", socket.AF_INET6, socket.SOCK_RAW, 58),
                              ("packet", socket.AF_PACKET, socket.SOCK_RAW, 0x0300)):
    try:
        socket.socket(fam, typ, proto).close()  # nothing is sent
        res[name] = "OK"
    except OSError as e:
        res[name] = errno.errorcode.get(e.errno, str(e.errno))
print(res)
if "OK" in res.values():
    print("ESCAPED raw socket created")
elif set(res.values()) == {"EPERM"}:
    print("BLOCKED raw sockets EPERM")
else:
    print("BLOCKED other", res)
