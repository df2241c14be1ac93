"""Gradescope's names for when a test's result is shown, and the course file's: one
table for the autograder's results.json and the unit-test assignments' settings."""

from __future__ import annotations

#: Gradescope's visibility -> the course file's (``grader.course``) names
COURSE_VISIBILITY = {"visible": "visible", "hidden": "hidden",
                     "after_due_date": "after_deadline", "after_published": "after_release"}
