# case: proc-kallsyms
# why: kernel addresses (kptr_restrict=0 on this host) must be masked by the sandbox
# expect-outcome: succeeded
# expect-stdout: BLOCKED kallsyms
import errno
try:
    with open("/proc/kallsyms") as f:
        lines = f.readlines()
except OSError as e:
    print("BLOCKED kallsyms", errno.errorcode.get(e.errno, e.errno))
else:
    nonzero = [l for l in lines if l.split() and int(l.split()[0], 16) != 0]
    if not lines:
        print("BLOCKED kallsyms empty")
    elif not nonzero:
        print("BLOCKED kallsyms all %d addresses zero" % len(lines))
    else:
        print("ESCAPED kallsyms shows %d real addresses, e.g. %s" % (len(nonzero), nonzero[0].strip()))
