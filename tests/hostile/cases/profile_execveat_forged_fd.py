# case: profile-execveat-forged-fd
# why: compute: no exec by any route: execveat with AT_EMPTY_PATH on a forged fd number, with an absolute path (the kernel then ignores the fd), on a descriptor dup2'd to a high number, after trying to raise RLIMIT_NOFILE; standard allows it
# expect-outcome: succeeded
# expect-stdout: rlimit raise EPERM
# expect-stdout: forged fd, empty path EBADF
# expect-stdout: EXEC RAN absolute path beside a forged fd
# compute-why: every exec after the first is refused (EPERM), whatever its arguments: init counts, the filter does not look at fds
# compute-expect-outcome: succeeded
# compute-expect-stdout: rlimit raise EPERM
# compute-expect-stdout: forged fd, empty path EPERM
# compute-expect-stdout: dup2 to 1000, empty path EPERM
# compute-expect-stdout: BLOCKED absolute path beside a forged fd EPERM
import ctypes, errno, os, resource, sys
libc = ctypes.CDLL(None, use_errno=True)
SYS_execveat, AT_EMPTY_PATH = 322, 0x1000
argv = (ctypes.c_char_p * 3)(b"echo", b"EXEC RAN absolute path beside a forged fd", None)
envp = (ctypes.c_char_p * 1)(None)
def execveat(fd, path):
    sys.stdout.flush()
    libc.syscall(SYS_execveat, fd, path, argv, envp, AT_EMPTY_PATH)
    return errno.errorcode.get(ctypes.get_errno(), ctypes.get_errno())
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
try:
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard + 1024, hard + 1024))
    print("ESCAPED rlimit raised to", hard + 1024)
except ValueError:  # Python's word for EPERM here
    print("rlimit raise EPERM")
except OSError as e:
    print("rlimit raise", errno.errorcode.get(e.errno, e.errno))
if hard > 1023:  # a forged number no descriptor has
    print("forged fd, empty path", execveat(1023, b""))
# An absolute path: the kernel ignores the fd, so a rule "only execveat on fd
# N with AT_EMPTY_PATH" alone would let this through.
print("BLOCKED absolute path beside a forged fd", execveat(1023, b"/bin/echo"))
# A program file as a descriptor at a high number, as an exec-by-fd scheme would use.
fd = os.open("/bin/echo", os.O_PATH)
os.dup2(fd, hard - 24, inheritable=False)
argv[1] = b"EXEC RAN dup2'd fd"
print("dup2 to %d, empty path" % (hard - 24), execveat(hard - 24, b""))
