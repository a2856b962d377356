# case: net-socket-protocols
# why: IPv4/IPv6 sockets only for TCP and UDP (MPTCP, UDP-Lite, SCTP and ping sockets are kernel code no runtime needs), socketpair only for unix sockets; the filter says EPERM whatever this kernel offers
# expect-outcome: succeeded
# expect-stdout: BLOCKED other protocols EPERM
# expect-stdout: allowed {'tcp': 'OK', 'tcp6': 'OK', 'udp': 'OK', 'udp6': 'OK', 'unix pair': 'OK'}
# compute-why: compute denies every socket(); an AF_UNIX socketpair still works
# compute-expect-outcome: succeeded
# compute-expect-stdout: BLOCKED other protocols EPERM
# compute-expect-stdout: allowed {'tcp': 'EPERM', 'tcp6': 'EPERM', 'udp': 'EPERM', 'udp6': 'EPERM', 'unix pair': 'OK'}
import errno, socket
def try_socket(fam, typ, proto):
    try:
        socket.socket(fam, typ, proto).close()  # nothing is sent
        return "OK"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
def try_pair(fam, typ):
    try:
        for s in socket.socketpair(fam, typ):
            s.close()
        return "OK"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
denied = {
    "mptcp": try_socket(socket.AF_INET, socket.SOCK_STREAM, 262),
    "mptcp6": try_socket(socket.AF_INET6, socket.SOCK_STREAM, 262),
    "udplite": try_socket(socket.AF_INET, socket.SOCK_DGRAM, 136),
    "udplite6": try_socket(socket.AF_INET6, socket.SOCK_DGRAM, 136),
    "sctp": try_socket(socket.AF_INET, socket.SOCK_STREAM, 132),
    "sctp6 seqpacket": try_socket(socket.AF_INET6, socket.SOCK_SEQPACKET, 132),
    "ping": try_socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP),
    "ping6": try_socket(socket.AF_INET6, socket.SOCK_DGRAM, socket.IPPROTO_ICMPV6),
    "tcp over dgram": try_socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_TCP),
    "inet pair": try_pair(socket.AF_INET, socket.SOCK_STREAM),
    "inet6 pair": try_pair(socket.AF_INET6, socket.SOCK_DGRAM),
    "netlink pair": try_pair(socket.AF_NETLINK, socket.SOCK_RAW),
}
allowed = {
    "tcp": try_socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP),
    "tcp6": try_socket(socket.AF_INET6, socket.SOCK_STREAM, 0),
    "udp": try_socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_UDP),
    "udp6": try_socket(socket.AF_INET6, socket.SOCK_DGRAM, 0),
    "unix pair": try_pair(socket.AF_UNIX, socket.SOCK_STREAM),
}
print("denied", denied)
print("allowed", allowed)
if "OK" in denied.values():
    print("ESCAPED", [k for k, v in denied.items() if v == "OK"])
elif set(denied.values()) == {"EPERM"}:
    print("BLOCKED other protocols EPERM")
else:
    print("UNEXPECTED", denied)
