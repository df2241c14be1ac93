"""Assignments graded by the course's own unit tests and their JUnit XML report."""
