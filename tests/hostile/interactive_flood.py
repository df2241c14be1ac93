# expect: WA
# problem: chat
# Floods the interactor with output instead of answering: the interactor rejects the
# first line; the flood then meets a closed pipe. Nothing may hang.
import sys

while True:
    sys.stdout.write("9" * 65536)
