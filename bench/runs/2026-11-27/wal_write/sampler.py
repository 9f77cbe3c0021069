"""CPU by process group, once a second, as JSON lines: the processes whose
command line holds "emulate" (the emulator, and `storlab bench db --emulate`
itself), "postgres", other storlab/python; and the machine's user, system,
idle, iowait and steal from /proc/stat, in CPU-seconds a second.

    python sampler.py OUT.jsonl     # until killed
"""
import os, sys, time, json
HZ = os.sysconf('SC_CLK_TCK')
def procs():
    out = {}
    for p in os.listdir('/proc'):
        if not p.isdigit(): continue
        try:
            st = open(f'/proc/{p}/stat').read()
            cmd = open(f'/proc/{p}/cmdline').read().replace('\0', ' ')
        except OSError: continue
        f = st[st.rfind(')')+2:].split()
        cpu = (int(f[11]) + int(f[12])) / HZ
        if 'emulate' in cmd: g = 'emulator'
        elif 'postgres' in cmd or st.split()[1] == '(postgres)': g = 'postgres'
        elif 'storlab' in cmd or 'python' in cmd: g = 'client'
        else: g = 'other'
        out[p] = (g, cpu)
    return out
def stat():
    f = open('/proc/stat').readline().split()[1:]
    v = list(map(int, f))
    return {'user': v[0]+v[1], 'sys': v[2]+v[5]+v[6], 'idle': v[3], 'iowait': v[4], 'steal': v[7]}
out = open(sys.argv[1], 'w')
prev = procs(); ps = stat(); t0 = time.time()
while True:
    time.sleep(1)
    cur = procs(); cs = stat()
    g = {}
    for p, (grp, cpu) in cur.items():
        base = prev.get(p, (grp, 0.0))[1] if p in prev else 0.0
        g[grp] = g.get(grp, 0.0) + cpu - base
    rec = {'t': round(time.time(), 1), **{k: round(v, 3) for k, v in g.items()}, **{k: (cs[k]-ps[k])/HZ for k in cs}}
    out.write(json.dumps(rec) + '\n'); out.flush()
    prev, ps = cur, cs
