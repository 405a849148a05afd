"""Notebooks the hygiene scan must survive: malformed JSON (scanned as text), foreign
structure, and rich outputs (HTML, JSON, errors) whose stored text can hold a token."""

from __future__ import annotations

import json

from stackcheck.hygiene import scan

from .conftest import SECRETS, code_cell, notebook, plant

TOKEN = SECRETS["notebook"]
MASKED = "hf_N...(43 chars)"


def findings(root) -> list[tuple[str, str, str]]:
    report = scan(str(root))
    return sorted((c.id, c.subject, c.observed) for c in report.checks if c.verdict != "ok")


def test_malformed_notebooks_are_scanned_as_text(tmp_path):
    plant(
        tmp_path,
        {
            "truncated.ipynb": '{"cells": [{"cell_type": "code", "source": ["t = \'' + TOKEN + "'\\n\"]",
            "foreign.ipynb": json.dumps({"cells": {"0": "not a list"}, "note": "HF " + TOKEN}),
            "binary.ipynb": b"\x00\x01\x02" + TOKEN.encode(),
        },
    )
    assert findings(tmp_path) == [
        ("HYG001", "foreign.ipynb line 1", f"Hugging Face token {MASKED}"),
        ("HYG001", "truncated.ipynb line 1", f"Hugging Face token {MASKED}"),
    ]


def test_rich_outputs_and_odd_cells(tmp_path):
    plant(
        tmp_path,
        {
            "rich.ipynb": notebook(
                [
                    "not a cell",  # skipped, but still counts as position 0, as Jupyter counts
                    code_cell(
                        "display(x)",
                        [
                            "not an output",
                            {
                                "output_type": "display_data",
                                "data": {"text/html": ["<b>", TOKEN, "</b>"], "image/png": "iVBORw0KGgo="},
                            },
                        ],
                    ),
                    code_cell(
                        "x",
                        [
                            {
                                "output_type": "execute_result",
                                "data": {"application/json": {"token": TOKEN}},
                                "execution_count": 2,
                            }
                        ],
                    ),
                    code_cell(
                        "raise",
                        [
                            {
                                "output_type": "error",
                                "ename": "ValueError",
                                "evalue": "bad " + TOKEN,
                                "traceback": ["Traceback"],
                            }
                        ],
                    ),
                    {
                        "cell_type": "code",
                        "source": "login('" + TOKEN + "')\n",
                        "outputs": None,
                    },  # source as one string
                    code_cell(
                        "print('clean')", [{"output_type": "stream", "name": "stdout", "text": "clean\n"}]
                    ),
                ]
            )
        },
    )
    assert findings(tmp_path) == [
        ("HYG001", "rich.ipynb cell 4 line 1", f"Hugging Face token {MASKED}"),
        ("HYG005", "rich.ipynb cell 1 output", f"Hugging Face token {MASKED}"),
        ("HYG005", "rich.ipynb cell 2 output", f"Hugging Face token {MASKED}"),
        ("HYG005", "rich.ipynb cell 3 output", f"Hugging Face token {MASKED}"),
    ]


def test_notebook_output_fix_clears_that_notebook(tmp_path):
    plant(
        tmp_path,
        {
            "my nb.ipynb": notebook(
                [code_cell("whoami()", [{"output_type": "stream", "name": "stdout", "text": TOKEN}])]
            )
        },
    )
    [c] = [c for c in scan(str(tmp_path)).checks if c.id == "HYG005"]
    assert (
        c.fix == "revoke the Hugging Face token, then clear the outputs: jupyter nbconvert "
        "--clear-output --inplace 'my nb.ipynb'"
    )
    assert TOKEN not in json.dumps([c.observed, c.fix, c.evidence])
