# case: cve-2024-21626-cwd
# why: runc CVE-2024-21626: a leaked host directory fd as cwd; cwd must be /workspace inside, with no extra fds
# expect-outcome: succeeded
# expect-stdout: BLOCKED cwd=/workspace fds=0,1,2
import os, stat
cwd_link = os.readlink("/proc/self/cwd")
cwd = os.getcwd()
fds = sorted(int(n) for n in os.listdir("/proc/self/fd"))
fds = [n for n in fds if n <= 2 or os.path.lexists("/proc/self/fd/%d" % n)]  # drop listdir's own
# fd 3 is the data request channel (a pipe, docs/data-requests.md): not a directory, checked as one below
channel = int(os.environ.get("AIRLOCK_REQUEST_FD", "-1"))
dirs = []
for n in fds:
    try:
        if stat.S_ISDIR(os.fstat(n).st_mode):
            dirs.append((n, os.readlink("/proc/self/fd/%d" % n)))
    except OSError:
        pass
# climbing from the cwd must end at the sandbox's own root
up = os.path.realpath(os.path.join(cwd_link, *([".."] * 20)))
root_entries = sorted(os.listdir(up))
print("cwd", cwd, "link", cwd_link, "fds", fds, "dir fds", dirs, "root", root_entries)
others = [n for n in fds if n != channel or not stat.S_ISFIFO(os.fstat(n).st_mode)]
if cwd != "/workspace" or cwd_link != "/workspace" or dirs or others != [0, 1, 2] or "work" in root_entries:
    print("ESCAPED cwd/fd state:", cwd, cwd_link, fds, dirs)
else:
    print("BLOCKED cwd=/workspace fds=0,1,2")
