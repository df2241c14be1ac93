"""Gradescope autograders: the package that names one (``package``), the autograder
itself (``autograder``: setup.sh, run_autograder) and what it writes (``results``)."""
