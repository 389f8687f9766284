"""fdholder.py - a process out of a command's reach that was handed its
output, for the tests that a call or a terminal still ends with its program.

  python3 -m fdholder hold SOCK [SECONDS]  take the fd sent on the unix socket
                                           SOCK and write into it until
                                           SECONDS (30) pass or it breaks
  python3 fdholder.py hand SOCK [LINGER]   print "handing", send our stdout
                                           on SOCK, and exit LINGER seconds
                                           later (0: at once), so the holder
                                           has written by then
"""
import array
import os
import socket
import sys
import time


def hold(path, seconds):
    s = socket.socket(socket.AF_UNIX)
    s.bind(path)
    s.listen(1)
    c, _ = s.accept()
    _, anc, _, _ = c.recvmsg(1, socket.CMSG_LEN(4))
    fd = array.array("i", anc[0][2][:4])[0]
    end = time.time() + seconds
    while time.time() < end:
        try:
            os.write(fd, b"x" * 4096)
        except OSError:
            break


def hand(path, linger):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    print("handing", flush=True)
    s.sendmsg([b"1"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [1]))])
    time.sleep(linger)


if __name__ == "__main__":
    if sys.argv[1] == "hold":
        hold(sys.argv[2], float(sys.argv[3]) if len(sys.argv) > 3 else 30)
    else:
        hand(sys.argv[2], float(sys.argv[3]) if len(sys.argv) > 3 else 0)
