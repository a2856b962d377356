# case: profile-sockets
# why: compute: no socket of any family (AF_UNIX socketpair aside), so no loopback and no gateway; standard allows unix, TCP/UDP and route netlink sockets
# expect-outcome: succeeded
# expect-stdout: {'unix stream': 'OK', 'unix dgram': 'OK', 'tcp': 'OK', 'udp': 'OK', 'tcp6': 'OK', 'udp6': 'OK', 'netlink route': 'OK', 'unix socketpair': 'OK'}
# compute-why: compute denies socket() whatever the family (EPERM); the job filter's AF_UNIX socketpair stays
# compute-expect-outcome: succeeded
# compute-expect-stdout: {'unix stream': 'EPERM', 'unix dgram': 'EPERM', 'tcp': 'EPERM', 'udp': 'EPERM', 'tcp6': 'EPERM', 'udp6': 'EPERM', 'netlink route': 'EPERM', 'unix socketpair': 'OK'}
import errno, socket
def attempt(make):
    try:
        for s in make(): s.close()
        return "OK"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
out = {}
for label, fam, typ, proto in (("unix stream", socket.AF_UNIX, socket.SOCK_STREAM, 0),
                               ("unix dgram", socket.AF_UNIX, socket.SOCK_DGRAM, 0),
                               ("tcp", socket.AF_INET, socket.SOCK_STREAM, 0),
                               ("udp", socket.AF_INET, socket.SOCK_DGRAM, 0),
                               ("tcp6", socket.AF_INET6, socket.SOCK_STREAM, 0),
                               ("udp6", socket.AF_INET6, socket.SOCK_DGRAM, 0),
                               ("netlink route", socket.AF_NETLINK, socket.SOCK_RAW, 0)):
    out[label] = attempt(lambda: [socket.socket(fam, typ, proto)])  # nothing is sent
out["unix socketpair"] = attempt(lambda: socket.socketpair())
print(out)
