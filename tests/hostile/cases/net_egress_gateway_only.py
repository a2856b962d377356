# case: net-egress-gateway-only
# why: with a destination allowed, the gateway is still the only way out: no route, and the gateway refuses other names, a spoofed Host, the metadata address and garbage
# args: --allow allowed.invalid:80
# expect-outcome: succeeded
# expect-stdout: udp BLOCKED ENETUNREACH
# expect-stdout: tcp BLOCKED ENETUNREACH
# expect-stdout: name BLOCKED 403 denied.invalid:80 is not in the job's network policy
# expect-stdout: host-header BLOCKED 403 denied.invalid:80 is not in the job's network policy
# expect-stdout: metadata BLOCKED 403 169.254.169.254:80 is not in the job's network policy
# expect-stdout: garbage BLOCKED 400
# expect-limit: network
# Nothing here reaches a resolver: refused names are never looked up, and the
# allowed name is never asked for. UDP connect() sends nothing.
# compute-why: a job under compute may not name network destinations
# compute-expect-outcome: input_rejected
# compute-expect-reason: profile compute allows no network
import errno, os, socket

def blocked(name, e):
    print(name, "BLOCKED", errno.errorcode.get(e.errno, e.errno))

u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    u.connect(("192.0.2.1", 53))
    print("udp ESCAPED route from", u.getsockname()[0])
except OSError as e:
    blocked("udp", e)
t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
t.settimeout(2)
try:
    t.connect(("192.0.2.1", 80))
    print("tcp ESCAPED")
except OSError as e:
    blocked("tcp", e)

proxy = os.environ["HTTP_PROXY"].rsplit(":", 1)
def ask(name, raw):
    s = socket.create_connection(("127.0.0.1", int(proxy[1])), timeout=5)
    s.sendall(raw)
    answer = b""
    while True:
        chunk = s.recv(4096)
        if not chunk:
            break
        answer += chunk
    status = answer.split(b" ", 2)[1].decode() if answer.startswith(b"HTTP/1.1 ") else "?"
    body = answer.split(b"\r\n\r\n", 1)[-1].decode().strip().replace("airlock egress: ", "")
    print(name, "BLOCKED" if status in ("400", "403") else "ESCAPED", status, body)

ask("name", b"GET http://denied.invalid/ HTTP/1.1\r\nHost: denied.invalid\r\n\r\n")
ask("host-header", b"GET http://denied.invalid/ HTTP/1.1\r\nHost: allowed.invalid\r\n\r\n")
ask("metadata", b"CONNECT 169.254.169.254:80 HTTP/1.1\r\n\r\n")
ask("garbage", b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03\r\n\r\n")
