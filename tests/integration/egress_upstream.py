#!/usr/bin/env python3
"""A test upstream for the egress tests: runs inside a network namespace the
test made. Every request is appended to --log as one JSON line (port, method,
path, headers, body size). GET/POST answer with that same JSON (so a header
the gateway added would be echoed back to the code, which must not see it);
/bytes/N answers N bytes. The echoes a credential scrubber must catch:
/echo-chunked/N answers that JSON in chunks of N bytes, each written (and
flushed) on its own; /echo-split/K in two chunks, split K bytes into the
Authorization value; /echo-token answers only the token of the Authorization
header (without its "Bearer " scheme) in the body and in response headers;
/echo-gzip answers the token gzip-compressed although the request asked for
identity. Plain HTTP on each --port, TLS on --tls-port."""
import argparse
import gzip
import json
import socket
import socketserver
import ssl
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

lock = threading.Lock()


def handler_for(log_path, port):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def answer(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            entry = {"port": port, "method": self.command, "path": self.path,
                     "headers": dict(self.headers.items()), "body_bytes": len(body)}
            with lock, open(log_path, "a") as f:
                f.write(json.dumps(entry) + "\n")
            if self.path.startswith("/bytes/"):
                n = int(self.path.split("/")[2])
                self.send_response(200)
                self.send_header("Content-Length", str(n))
                self.end_headers()
                chunk = b"x" * (1 << 20)
                while n > 0:
                    self.wfile.write(chunk[: min(n, len(chunk))])
                    n -= min(n, len(chunk))
                return
            value = self.headers.get("Authorization") or ""
            token = value.split(" ", 1)[-1]
            if self.path.startswith(("/echo-chunked/", "/echo-split/")):
                n = int(self.path.split("/")[2])
                out = json.dumps(entry).encode()
                if self.path.startswith("/echo-split/"):
                    cut = out.find(value.encode()) + n
                    pieces = [out[:cut], out[cut:]]
                else:
                    pieces = [out[at:at + n] for at in range(0, len(out), n)]
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for piece in pieces:
                    if piece:
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                        self.wfile.flush()
                self.wfile.write(b"0\r\nX-Trailer: " + value.encode() + b"\r\n\r\n")
                return
            if self.path == "/echo-token":
                out = ("token=" + token + "\n").encode()
                self.send_response(200)
                self.send_header("X-Echo-Token", token)
                self.send_header("X-Echo-Value", value)
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)
                return
            if self.path == "/echo-gzip":
                out = gzip.compress(token.encode())
                self.send_response(200)
                self.send_header("Content-Encoding", "gzip")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)
                return
            out = json.dumps(entry).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        do_GET = do_POST = do_PUT = do_DELETE = answer

    return Handler


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bind", default="0.0.0.0")
    ap.add_argument("--bind6", default="")
    ap.add_argument("--port", type=int, action="append", default=[])
    ap.add_argument("--tls-port", type=int, default=0)
    ap.add_argument("--cert", default="")
    ap.add_argument("--key", default="")
    ap.add_argument("--log", required=True)
    ap.add_argument("--ready", required=True)
    a = ap.parse_args()
    servers = []
    for port in a.port:
        servers.append(ThreadingHTTPServer((a.bind, port), handler_for(a.log, port)))
    if a.tls_port:
        s = ThreadingHTTPServer((a.bind, a.tls_port), handler_for(a.log, a.tls_port))
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(a.cert, a.key)
        s.socket = ctx.wrap_socket(s.socket, server_side=True)
        servers.append(s)
    if a.bind6:
        class V6(ThreadingHTTPServer):
            address_family = socket.AF_INET6

            def server_bind(self):  # beside the IPv4 listener on the same port
                self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
                super().server_bind()
        for port in a.port:
            servers.append(V6((a.bind6, port), handler_for(a.log, port)))
    for s in servers:
        s.daemon_threads = True
        threading.Thread(target=s.serve_forever, daemon=True).start()
    open(a.ready, "w").write("ready\n")
    threading.Event().wait()


if __name__ == "__main__":
    sys.exit(main())
