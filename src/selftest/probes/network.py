# The selftest's network probe: the selftest listens on the host's loopback
# (PORT) and on an abstract unix socket (ABSTRACT); a job with no approved
# destination must reach neither. Nothing outside this machine is tried.
import os
import socket

def attempt(name, family, address):
    s = socket.socket(family, socket.SOCK_STREAM)
    s.settimeout(2)
    try:
        s.connect(address)
        s.sendall(b"GET / HTTP/1.0\r\n\r\n")
        print("PROBE", name, "OPEN", "connected to", repr(address), flush=True)
    except OSError as e:
        print("PROBE", name, "BLOCKED", os.strerror(e.errno) if e.errno else str(e), flush=True)
    finally:
        s.close()

attempt("host_loopback", socket.AF_INET, ("127.0.0.1", PORT))
attempt("host_abstract_socket", socket.AF_UNIX, "\0" + ABSTRACT)
# No device but loopback: a UDP connect() picks a route without sending anything.
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    u.connect(("192.0.2.1", 9))  # TEST-NET-1: never sent, only routed
    print("PROBE route OPEN", "a route exists via", u.getsockname()[0], flush=True)
except OSError as e:
    print("PROBE route BLOCKED", os.strerror(e.errno), flush=True)
finally:
    u.close()
