"""Execute a notebook headless with nbclient (a fresh python3 kernel of this
venv); any cell error fails with the cell's traceback. Prints the text output
of the last code cell and the number of images the notebook drew.

usage: python run.py NOTEBOOK.ipynb   (NANOLOAD_OUT, NANOLOAD_TABLES: the inputs)
"""
import sys

import nbformat
from nbclient import NotebookClient


def main(path):
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3").execute()
    code = [c for c in nb.cells if c.cell_type == "code"]
    images = sum(
        1 for c in code for o in c.outputs if o.get("output_type") == "display_data" and "image/png" in o.get("data", {})
    )
    last = "".join(o.get("text", "") for o in code[-1].outputs if o.get("output_type") == "stream")
    print(f"images: {images}")
    print(last.strip())


if __name__ == "__main__":
    main(sys.argv[1])
