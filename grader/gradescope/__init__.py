"""The Gradescope autograder format (pure): what an autograder writes, checked."""
