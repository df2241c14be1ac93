# expect: TLE
import time
time.sleep(10**6)
