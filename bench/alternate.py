#!/usr/bin/env python3
"""alternate.py N CMD... - run each command N times, one after the other in
turn (so that a burst of load on a shared machine hits them all alike), and
print per command the median wall time and the median CPU time (user +
system of the command and the children it waited for), with the ratio of
each to the last command.  stdout goes to /dev/null.
Example: bench/alternate.py 300 "./wap exec -- /bin/true" "timeout 10 /bin/true"
"""
import os, shlex, shutil, statistics, sys, time

n = int(sys.argv[1])
cmds = [shlex.split(c) for c in sys.argv[2:]]
for c in cmds:
    c[0] = shutil.which(c[0]) or c[0]
wall = [[] for _ in cmds]
cpu = [[] for _ in cmds]
null = os.open(os.devnull, os.O_WRONLY)
for _ in range(n):
    for k, c in enumerate(cmds):
        t0 = time.perf_counter()
        pid = os.posix_spawn(c[0], c, os.environ, file_actions=[(os.POSIX_SPAWN_DUP2, null, 1)])
        _, st, ru = os.wait4(pid, 0)
        wall[k].append((time.perf_counter() - t0) * 1e6)
        cpu[k].append((ru.ru_utime + ru.ru_stime) * 1e6)
        if st:
            sys.exit("%s: exit status %d" % (" ".join(c), st))
last_w, last_c = statistics.median(wall[-1]), statistics.median(cpu[-1])
for k, c in enumerate(cmds):
    w, u = statistics.median(wall[k]), statistics.median(cpu[k])
    print("%9.0f us wall (%.2fx)  %7.0f us cpu (%.2fx)  %s" % (w, w / last_w, u, u / last_c, " ".join(c)))
