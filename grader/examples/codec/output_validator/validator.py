"""Multi-pass validator for 'codec': argv = input answer feedback_dir, the submission's
output on stdin. Pass 1 (no state yet) checks the encoding and writes nextpass.in;
pass 2 checks the decoded word. Exit 42 accepts, 43 rejects."""
import os
import sys

fb = sys.argv[3]
state = os.path.join(fb, "word.txt")


def reject(msg):
    with open(os.path.join(fb, "judgemessage.txt"), "a") as f:
        f.write(msg + "\n")
    sys.exit(43)


out = sys.stdin.read(100000).split()
if not os.path.exists(state):
    word = open(sys.argv[1]).read().split()[1]
    if len(out) != 1 or not out[0].isdigit():
        reject("pass 1: the encoding must be one string of digits")
    if len(out[0]) > 3 * len(word):
        reject(f"pass 1: {len(out[0])} digits for {len(word)} letters")
    with open(state, "w") as f:
        f.write(word)
    with open(os.path.join(fb, "nextpass.in"), "w") as f:
        f.write(f"decode\n{out[0]}\n")
    sys.exit(42)
word = open(state).read()
if out != [word]:
    reject(f"pass 2: decoded {' '.join(out)[:40]!r}, the word was {word[:40]!r}")
sys.exit(42)
