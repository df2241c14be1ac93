"""A course on gradeline: the course file (deadlines, late policy, grace days,
extensions, which submission counts, test group visibility), the grades and LMS files
that follow from it, what students and staff are shown of it (frozen values with one
``to_json``: ``shown``, ``staffview``, ``similarity_pairs``) and which grades go to
its LMS (``lms_grades``). Pure: it reads files and computes; the pipeline grades."""
