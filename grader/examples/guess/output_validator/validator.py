"""Interactor for 'guess': argv = input answer feedback_dir; the submission's output
on stdin, our stdout is its input. Exit 42 accepts, 43 rejects."""
import sys

LIMIT = 31


def finish(code, msg):
    with open(sys.argv[3] + "judgemessage.txt", "a") as f:
        f.write(msg + "\n")
    sys.exit(code)


x = int(open(sys.argv[1]).read().split()[0])
for asked in range(1, LIMIT + 1):
    line = sys.stdin.readline(200)
    if not line:
        finish(43, f"the submission stopped after {asked - 1} queries without finding {x}")
    parts = line.split()
    if len(parts) != 2 or parts[0] != "?":
        finish(43, f"query {asked}: {line[:60]!r} is not '? y'")
    try:
        y = int(parts[1])
    except ValueError:
        finish(43, f"query {asked}: {parts[1][:30]!r} is not an integer")
    if y == x:
        print("=", flush=True)
        finish(42, f"found {x} in {asked} queries")
    print("<" if x < y else ">", flush=True)
finish(43, f"more than {LIMIT} queries")
