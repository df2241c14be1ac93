print(1, int(input()))  # always valid, one part: full marks only where k_max is 1
