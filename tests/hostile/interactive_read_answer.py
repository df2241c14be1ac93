# expect: AC
# problem: chat
# An interactive submission looks for the test's answer and the interactor's files (its
# feedback directory, the FIFOs' directory): none may be visible to it.
import glob
import os

found = []
for pattern in ("/judge/data/*", "/judge/feedback/*", "/gl/work/**", "/proc/*/root/judge/data/*",
                "/work/../*/judge*"):
    for p in glob.glob(pattern, recursive=True):
        if os.path.isfile(p):
            found.append(p)
a, b = map(int, input().split())
print(a + b if not found else found[0], flush=True)
