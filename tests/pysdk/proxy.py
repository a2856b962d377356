"""A TCP proxy on loopback between an SDK client and airlock serve that can
break a connection on purpose: cut it after N bytes of the answer, stall it
after N bytes (the socket stays open, nothing more comes), or replace bytes
of the answer. Each connection takes the next plan; then it passes through."""
import socket
import threading


class Proxy:
    def __init__(self, target_port):
        self.target = ("127.0.0.1", target_port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.plans = []
        self.requests = []  # the request head of each connection, as text
        self._lock = threading.Lock()
        self._socks = []
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def plan(self, *plans):
        """Each plan a dict: {"cut_after": N}, {"stall_after": N}, {"replace": (old, new)}, or {} to pass."""
        with self._lock:
            self.plans.extend(plans)

    def _accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            with self._lock:
                plan = self.plans.pop(0) if self.plans else {}
                upstream = socket.create_connection(self.target)
                self._socks += [client, upstream]
            threading.Thread(target=self._up, args=(client, upstream), daemon=True).start()
            threading.Thread(target=self._down, args=(upstream, client, plan), daemon=True).start()

    def _up(self, client, upstream):
        head = b""
        try:
            while True:
                data = client.recv(65536)
                if not data:
                    break
                if len(head) < 8192:
                    head += data
                    if b"\r\n\r\n" in head:
                        with self._lock:
                            self.requests.append(head.split(b"\r\n\r\n")[0].decode("latin-1"))
                        head = b"x" * 8192
                upstream.sendall(data)
        except OSError:
            pass
        _close(upstream)
        _close(client)

    def _down(self, upstream, client, plan):
        sent = 0
        limit = plan.get("cut_after", plan.get("stall_after"))
        try:
            while True:
                data = upstream.recv(65536)
                if not data:
                    break
                if "replace" in plan:
                    data = data.replace(*plan["replace"])
                if limit is not None and sent + len(data) >= limit:
                    client.sendall(data[:limit - sent])
                    if "cut_after" in plan:
                        break
                    # stall: drain the service, send nothing more, keep the client's socket open
                    while upstream.recv(65536):
                        pass
                    return
                client.sendall(data)
                sent += len(data)
        except OSError:
            pass
        _close(upstream)
        _close(client)

    def close(self):
        self._closed = True
        _close(self.listener)
        with self._lock:
            for s in self._socks:
                _close(s)


def _close(s):
    try:
        s.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    try:
        s.close()
    except OSError:
        pass
