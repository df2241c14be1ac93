"""gradeline: batch-scheduled grading of programming assignments.

The pure core (problem, languages, limits, verdict, validate, result, export)
knows nothing of Slurm, SQL or containers; adapters live in their own modules
(sandbox/, image).
"""

__version__ = "0.1.0"
