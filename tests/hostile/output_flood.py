# expect: OLE
import sys
line = "y" * 4096 + "\n"
while True:
    sys.stdout.write(line)
