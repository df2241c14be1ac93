# expect: AC
# Detaches a daemon (double fork + setsid) that would outlive the test.
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        for fd in (0, 1, 2):
            os.close(fd)
        while True:
            time.sleep(0.05)
    os._exit(0)
time.sleep(0.1)
print(3)
