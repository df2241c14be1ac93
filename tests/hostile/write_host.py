# expect: AC
# Tries to leave files on the host or for the next run: /tmp, /var/tmp and /dev/shm are
# private to the run (and checked on the host by the test); the rest is read-only.
import os
left = []
for d in ("/work", "/etc", "/usr", "/", "/dev", "/gl", "/var/lib", "/run"):
    try:
        with open(os.path.join(d, "gradeline-hostile-marker"), "w") as f:
            f.write("x")
        left.append(d)
    except OSError:
        pass
print(f"PWNED: wrote into {left}") if left else print(3)
