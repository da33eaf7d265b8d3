"""``python -m msagent``: the same command line as the ``msagent`` script."""

from msagent.cli import app

if __name__ == "__main__":
    app(prog_name="msagent")
