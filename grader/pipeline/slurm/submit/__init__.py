"""The serving host's side: submitting array jobs and keeping a pool of pilots."""
