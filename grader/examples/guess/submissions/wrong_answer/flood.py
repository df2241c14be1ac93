# Floods the interactor instead of asking: rejected at the first malformed query.
import sys
while True:
    sys.stdout.write("? " + "9" * 4096 + "\n")
