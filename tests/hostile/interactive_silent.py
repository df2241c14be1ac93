# expect: TLE
# problem: chat
# Never reads or answers: the interactor waits for a line that never comes; the
# submission's wall clock ends it, and the interactor then sees end-of-file.
import time

time.sleep(3600)
