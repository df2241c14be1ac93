import sys
sys.exit("temps is not written yet")
