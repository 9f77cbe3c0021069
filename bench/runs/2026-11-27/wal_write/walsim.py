"""A WAL's pattern without the database: 8 KiB pwrite() then fdatasync(),
the same page written twice in a row as PostgreSQL rewrites a partly filled
WAL page; prints the write and sync latency.

    python walsim.py FILE COUNT 1     # write + fdatasync
    python walsim.py FILE COUNT 0     # writes only
"""
import os, sys, time, statistics as st
path = sys.argv[1]; n = int(sys.argv[2]); fsync = sys.argv[3] == '1'
fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
os.ftruncate(fd, 16 << 20)
buf = b'x' * 8192
w = []; s = []
off = 0
for i in range(n):
    t = time.perf_counter(); os.pwrite(fd, buf, off); t1 = time.perf_counter()
    if fsync: os.fdatasync(fd)
    t2 = time.perf_counter()
    w.append(t1 - t); s.append(t2 - t1)
    if i % 2: off = (off + 8192) % (16 << 20)   # rewrite the partial page, as WAL does
os.close(fd)
q = lambda a, p: sorted(a)[int(p * (len(a) - 1))] * 1e6
print(f"write mean {st.mean(w)*1e6:.0f} p50 {q(w,.5):.0f} p99 {q(w,.99):.0f} us; sync mean {st.mean(s)*1e6:.0f} p50 {q(s,.5):.0f} p99 {q(s,.99):.0f} us")
