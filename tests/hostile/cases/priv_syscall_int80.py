# case: priv-syscall-int80
# why: the 32-bit syscall ABI (int 0x80) bypasses an x86-64 filter unless it kills foreign-arch calls
# requires: int80
# expect-outcome: failed
# expect-signal: 31
import ctypes, mmap
code = bytes([0xb8, 0x14, 0, 0, 0,  # mov eax, 20 (i386 getpid)
              0xcd, 0x80,            # int 0x80
              0xc3])                 # ret
buf = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
buf.write(code)
addr = ctypes.addressof(ctypes.c_char.from_buffer(buf))
f = ctypes.CFUNCTYPE(ctypes.c_int)(addr)
print("calling int 0x80", flush=True)
r = f()
print("ESCAPED int 0x80 getpid returned", r)
