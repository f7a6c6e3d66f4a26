"""Executes clients/jupyter/examples/quickstart.ipynb with nbclient in the
Python that runs this script (the clean venv of tests/package/run.sh): every
code cell runs without an error, and the server that answered is the one the
wheel installed.
    python run_notebook.py NOTEBOOK PROFILE EXPECTED_SERVER"""
from __future__ import annotations

import os
import sys

import nbformat
from nbclient import NotebookClient


def main() -> int:
    notebook, profile, expected = sys.argv[1:4]
    os.environ["NSYS_AI_PROFILE"] = profile
    nb = nbformat.read(notebook, as_version=4)
    probe = nbformat.v4.new_code_cell("import nsys_ai_native; print('SERVER=' + nsys_ai_native.find_server())")
    nb.cells.append(probe)
    NotebookClient(nb, kernel_name="python3", timeout=300,
                   resources={"metadata": {"path": os.path.dirname(os.path.abspath(notebook))}}).execute()
    failed = 0
    for i, c in enumerate(nb.cells):
        for o in c.get("outputs", []):
            if o.get("output_type") == "error":
                print(f"cell {i}: {o.get('ename')}: {o.get('evalue')}")
                failed += 1
    out = "".join(o.get("text", "") for o in probe.outputs if o.get("output_type") == "stream")
    if f"SERVER={expected}" not in out:
        print(f"the notebook's server is not the wheel's {expected}: {out!r}")
        failed += 1
    code = sum(1 for c in nb.cells if c.cell_type == "code")
    print(f"notebook: {code} code cells run, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
