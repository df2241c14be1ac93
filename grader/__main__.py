"""``python -m grader``: the ``gradeline`` command."""

from grader.cli.main import entrypoint

if __name__ == "__main__":
    entrypoint()
