# Asks once and waits for an answer it never reads, spinning: the interactor waits for
# the next query; the submission's CPU time runs out.
print("? 1", flush=True)
while True:
    pass
