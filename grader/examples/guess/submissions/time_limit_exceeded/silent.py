# Waits for the interactor to speak first; it waits for a query: neither moves until
# the wall clock ends the submission.
input()
