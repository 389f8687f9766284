"""ptyhold.py FILE - open a pty (the user's other terminal), write its slave's
name to FILE, and keep it open until killed; what the master reads is
appended to FILE.out (something a command wrote to the terminal)."""
import os, pty, sys, time
m, s = pty.openpty()
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(os.ttyname(s))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
os.set_blocking(m, False)
while True:
    try:
        data = os.read(m, 1000)
        with open(sys.argv[1] + ".out", "ab") as f:
            f.write(data)
    except BlockingIOError:
        time.sleep(0.05)
