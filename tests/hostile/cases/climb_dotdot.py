# case: climb-dotdot
# why: '..' from /workspace must stop at the sandbox root; host-only trees (/work, /home) are not there
# expect-outcome: succeeded
# expect-stdout: BLOCKED ENOENT climbing
import errno, os
targets = ["../" * 30 + "work", "../" * 30 + "home", "../" * 30 + "var/lib/dpkg", "../" * 30 + "root/.bash_history"]
seen = []
for t in targets:
    try:
        os.stat(t)
        seen.append("ESCAPED reached " + t.replace("../", "")[:60])
    except OSError as e:
        seen.append(errno.errorcode.get(e.errno, str(e.errno)))
# Also walk up with chdir and look at what '/' contains.
for _ in range(40):
    os.chdir("..")
top = sorted(os.listdir("."))
host_only = [n for n in ("work", "home", "root", "boot", "srv", "sys", "opt") if n in top]
print("root listing:", top)
bad = [s for s in seen if s.startswith("ESCAPED")]
if bad or host_only:
    print("ESCAPED", bad, "host-only dirs at top:", host_only)
elif all(s == "ENOENT" for s in seen):
    print("BLOCKED ENOENT climbing")
else:
    print("BLOCKED other", seen)
