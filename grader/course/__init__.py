"""A course on gradeline: the course file (deadlines, late policy, grace days,
extensions, which submission counts, test group visibility) and the grades and LMS
files that follow from it. Pure: it reads files and computes; the pipeline grades."""
