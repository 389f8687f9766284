# lint: the house rules a grep can check, so breaking one fails here and
# not later in review.
. tests/lib.sh
# every source of lib/, its subdirectories too (lib/git/...)
libc=$(find lib -name '*.c' | sort)
libch=$(find lib -name '*.[ch]' | sort)
# banned libc calls (as git's banned.h)
hits=$(grep -nE '\b(strcpy|sprintf|vsprintf|strcat|gets|strtok)[[:space:]]*\(' $libc applets/*.c main.c)
same "no banned libc calls (strcpy, sprintf, strcat, gets, strtok)" "$hits" ""
# lib/ returns errors: it never prints, exits or aborts, assert() included
# (a server must outlive a failed call; a forked child
# ends with _exit, which is allowed)
hits=$(grep -nE '(^|[^_a-z])(exit|_Exit|quick_exit|abort|assert|printf|puts|perror|err|errx|warn)[[:space:]]*\(' $libc | grep -vE '^\S+:\s*(/\*|\*)')
same "lib/ never prints, exits or aborts" "$hits" ""
hits=$(grep -nE '\b(stdout|stderr)\b' $libc | grep -vE '^\S+:\s*(/\*|\*)' | grep -vE 'STDOUT_FILENO|STDERR_FILENO|"stdout"|"stderr"')
same "lib/ never writes to stdout or stderr" "$hits" ""
# lib/ never includes anything from applets/
hits=$(grep -n '#include "\(\.\./\)*applets' $libch)
same "lib/ does not include applets/" "$hits" ""
# no realpath()-and-prefix confinement (lib/proc/landlock.c resolves system
# directories for the command lists, /bin -> /usr/bin and PATH dirs, which
# the agent cannot change; the workspace is never confined that way)
hits=$(grep -n 'realpath(' $libc applets/*.c | grep -v -e 'lib/fs/ws.c' -e 'lib/proc/landlock.c')
same "realpath() only names the root (lib/fs/ws.c) and system dirs (lib/proc/landlock.c)" "$hits" ""
# every file of lib/ says what it is for: '/* NAME - summary', NAME its
# path beneath lib/ (fs/ws.c, git/repo.c)
for f in $libch; do
	n=${f#lib/}
	check "$f starts with '/* $n - summary'" sh -c "head -n 1 '$f' | grep -qF '/* $n - '"
done
# every applet is one file with a header comment of the agreed shape
for f in applets/*.c; do
	check "$f starts with '/* wap NAME: summary'" sh -c "head -n 1 '$f' | grep -qE '^/\* wap [a-z0-9-]+: '"
done
