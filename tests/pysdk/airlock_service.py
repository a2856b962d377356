"""Starting a real `airlock serve` on loopback for the SDK tests, with API
keys made by `airlock keys create`, and stopping it (plus `airlock sweep`)
afterwards. Also used by install_check.py inside a network namespace, so it
imports nothing from the SDK."""
import os
import shutil
import signal
import subprocess
import tempfile


def binary():
    return os.environ.get("AIRLOCK_BINARY", "")


class Service:
    def __init__(self, extra_args=(), config=None):
        self.dir = tempfile.mkdtemp(prefix="airlock-pysdk-")
        self.data = os.path.join(self.dir, "data")
        self.state = os.path.join(self.dir, "state")
        os.makedirs(self.state)
        self.extra = list(extra_args)
        self.config = config
        self.proc = None
        self.url = None

    def key(self, tenant, scopes="run,read,publish"):
        out = subprocess.run([binary(), "keys", "create", "--tenant", tenant, "--scopes", scopes,
                              "--data-dir", self.data], check=True, capture_output=True, text=True)
        return out.stdout.strip()

    def start(self):
        args = [binary(), "serve", "--listen", "127.0.0.1:0", "--data-dir", self.data, "--state-dir", self.state]
        if self.config is not None:
            path = os.path.join(self.dir, "serve.toml")
            with open(path, "w") as f:
                f.write(self.config)
            args += ["--config", path]
        args += self.extra
        self.log_path = os.path.join(self.dir, "serve.log")
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=log, stdin=subprocess.DEVNULL)
        log.close()
        first = self.proc.stdout.readline().decode()
        at = first.find("127.0.0.1:")
        if at < 0:
            self.stop()
            raise RuntimeError(f"airlock serve did not start: {first!r}\n{self.log()}")
        port = int("".join(c for c in first[at + 10:].split()[0] if c.isdigit()))
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        return self

    def log(self):
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()[-4000:]
        except OSError:
            return ""

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc is not None:
            self.proc.stdout.close()
        self.proc = None
        subprocess.run([binary(), "sweep", "--state-dir", self.state], capture_output=True)
        shutil.rmtree(self.dir, ignore_errors=True)
