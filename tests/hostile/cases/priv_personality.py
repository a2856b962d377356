# case: priv-personality
# why: personality(READ_IMPLIES_EXEC) would make every readable mapping executable; only harmless values allowed
# expect-outcome: succeeded
# expect-stdout: BLOCKED personality EPERM
import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
before = libc.personality(0xffffffff)
r = libc.personality(0x0400000)  # READ_IMPLIES_EXEC
err = ctypes.get_errno()
after = libc.personality(0xffffffff)
print("before %#x after %#x" % (before, after))
if r != -1 and after & 0x0400000:
    libc.personality(before)
    print("ESCAPED personality READ_IMPLIES_EXEC set")
else:
    print("BLOCKED personality", errno.errorcode.get(err, err))
