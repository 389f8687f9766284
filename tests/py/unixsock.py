"""unixsock.py - pathname unix sockets for the sandbox's tests.

  (a PATH starting with @ names an abstract socket)
  python3 unixsock.py serve PATH      listen on PATH (made anew), answer
                                      "outside" to each connection, forever
  python3 unixsock.py connect PATH..  print, for each PATH, what connecting
                                      to it gave: its answer or the errno
  python3 unixsock.py self DIR        a server and a client of our own, on a
                                      socket in DIR and an abstract one:
                                      print "DIR ok" and "abstract ok"
"""
import errno
import os
import socket
import sys
import threading


def addr(path):
    return "\0" + path[1:] if path.startswith("@") else path


def serve(path):
    try:
        os.unlink(path)
    except (FileNotFoundError, ValueError):
        pass
    path = addr(path)
    s = socket.socket(socket.AF_UNIX)
    s.bind(path)
    s.listen(16)
    while True:
        c, _ = s.accept()
        c.sendall(b"outside")
        c.close()


def connect(path):
    try:
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(5)
        s.connect(addr(path))
        return s.recv(100).decode() or "empty"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))


def pair(addr):
    if addr[0] != "\0" and os.path.exists(addr):
        os.unlink(addr)
    s = socket.socket(socket.AF_UNIX)
    s.bind(addr)
    s.listen(1)
    t = threading.Thread(target=lambda: s.accept()[0].sendall(b"ok"))
    t.start()
    c = socket.socket(socket.AF_UNIX)
    c.settimeout(5)
    c.connect(addr)
    got = c.recv(10).decode()
    t.join()
    return got


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(sys.argv[2])
    elif sys.argv[1] == "connect":
        for p in sys.argv[2:]:
            print(p, connect(p))
    elif sys.argv[1] == "self":
        d = sys.argv[2]
        print(d, pair(os.path.join(d, "own.sock")))
        print("abstract", pair("\0wap-test-%d" % os.getpid()))
