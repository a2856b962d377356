"""Turns `runc spec`'s config.json into the worker container of
deploy/kubernetes/worker.yaml, for tests/k8s/oci_worker.sh.

What runc's default spec already does as Kubernetes' runtimes do: the masked
and read-only /proc paths, /sys read-only, /sys/fs/cgroup mounted read-only.
Added here: the worker's capabilities (and nothing else), a read-only root
made of the host's /usr and /etc, the pod's writable volumes as tmpfs (and
/run/airlock/uids bound from the host, as the DaemonSet's hostPath does), a
cgroup namespace, and optionally a Docker-format seccomp profile converted for
these capabilities the way Docker and containerd convert it.

usage: oci_bundle.py BUNDLE CAPS [--bind DIR]... [--seccomp PROFILE.json] [--allow SYSCALL,...] -- ARGV...
(--bind: a host directory seen read-only at the same path, e.g. the repository)
"""
import json
import os
import platform
import sys


def convert_seccomp(profile, caps, allow_extra):
    """Docker's profile format -> the OCI seccomp section, for x86-64 and `caps`:
    an entry counts when every capability it includes is granted and none it
    excludes is, and its architecture conditions hold."""
    arch = {"x86_64": "amd64", "aarch64": "arm64"}[platform.machine()]
    native = {"amd64": "SCMP_ARCH_X86_64", "arm64": "SCMP_ARCH_AARCH64"}[arch]
    architectures = [native]
    for a in profile.get("archMap") or []:
        if a["architecture"] == native:
            architectures += a.get("subArchitectures") or []
    syscalls = []
    for entry in profile["syscalls"]:
        inc, exc = entry.get("includes") or {}, entry.get("excludes") or {}
        if inc.get("arches") and arch not in inc["arches"]:
            continue
        if arch in (exc.get("arches") or []):
            continue
        if any(c not in caps for c in inc.get("caps") or []):
            continue
        if any(c in caps for c in exc.get("caps") or []):
            continue
        rule = {"names": entry["names"], "action": entry["action"]}
        for key in ("args", "errnoRet"):
            if entry.get(key) is not None:
                rule[key] = entry[key]
        syscalls.append(rule)
    if allow_extra:
        syscalls.append({"names": allow_extra, "action": "SCMP_ACT_ALLOW"})
    out = {"defaultAction": profile["defaultAction"], "architectures": architectures, "syscalls": syscalls}
    if profile.get("defaultErrnoRet") is not None:
        out["defaultErrnoRet"] = profile["defaultErrnoRet"]
    return out


def main(argv):
    if "--" not in argv or len(argv) < 4:
        sys.exit(__doc__)
    split = argv.index("--")
    opts, command = argv[1:split], argv[split + 1:]
    bundle, caps = opts[0], ["CAP_" + c.strip().upper() for c in opts[1].split(",") if c.strip()]
    seccomp_file, allow_extra, binds = None, [], []
    rest = opts[2:]
    while rest:
        if rest[0] == "--seccomp":
            seccomp_file, rest = rest[1], rest[2:]
        elif rest[0] == "--bind":
            binds, rest = binds + [os.path.abspath(rest[1])], rest[2:]
        elif rest[0] == "--allow":
            allow_extra, rest = [s for s in rest[1].split(",") if s], rest[2:]
        else:
            sys.exit(f"oci_bundle.py: unknown option {rest[0]}")

    path = os.path.join(bundle, "config.json")
    with open(path) as f:
        config = json.load(f)
    root = os.path.join(bundle, "rootfs")
    for d in ["usr", "etc", "tmp", "run/airlock", "var/lib/airlock", "proc", "dev", "sys"] + [b.lstrip("/") for b in binds]:
        os.makedirs(os.path.join(root, d), exist_ok=True)
    for link in ["bin", "sbin", "lib", "lib64"]:  # Debian's merged /usr
        if os.path.lexists("/" + link) and not os.path.lexists(os.path.join(root, link)):
            os.symlink(os.readlink("/" + link), os.path.join(root, link))

    config["root"] = {"path": "rootfs", "readonly": True}
    config["hostname"] = "airlock-worker"
    process = config["process"]
    process.update(terminal=False, args=command, noNewPrivileges=False,
                   env=["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"])
    process["capabilities"] = {k: caps for k in ("bounding", "effective", "permitted")}
    process.pop("rlimits", None)
    ro = ["rbind", "ro", "nosuid", "nodev"]
    config["mounts"] += [
        {"destination": "/usr", "type": "bind", "source": "/usr", "options": ro},
        {"destination": "/etc", "type": "bind", "source": "/etc", "options": ro},
        {"destination": "/tmp", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "nodev", "mode=1777"]},
        {"destination": "/run/airlock", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "nodev", "mode=0711"]},
        {"destination": "/run/airlock/uids", "type": "bind", "source": "/run/airlock/uids", "options": ["bind", "rw"]},
        {"destination": "/var/lib/airlock", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "nodev", "mode=0711"]},
    ]
    config["mounts"] += [{"destination": b, "type": "bind", "source": b, "options": ro} for b in binds]
    linux = config["linux"]
    linux["namespaces"].append({"type": "cgroup"})
    linux["cgroupsPath"] = "/" + os.path.basename(os.path.abspath(bundle))
    if seccomp_file:
        with open(seccomp_file) as f:
            linux["seccomp"] = convert_seccomp(json.load(f), caps, allow_extra)
    with open(path, "w") as f:
        json.dump(config, f, indent=1)


if __name__ == "__main__":
    main(sys.argv)
