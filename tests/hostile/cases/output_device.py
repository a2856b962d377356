# case: output-device
# why: device nodes cannot be created, and a symlink to /dev/zero is refused (never read forever)
# expect-outcome: output_rejected
# expect-stdout: mknod EPERM
# expect-output: zero rejected symlink
import errno, os, stat
try:
    os.mknod("/output/null", stat.S_IFCHR | 0o666, os.makedev(1, 3))
    print("ESCAPED mknod created a device node")
except OSError as e:
    print("mknod", errno.errorcode.get(e.errno, e.errno))
os.symlink("/dev/zero", "/output/zero")
print("PLANTED symlink to /dev/zero")
