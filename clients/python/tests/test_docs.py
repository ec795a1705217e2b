"""docs/clients-python.md against the package: every keyword a program can pass is documented
there, so the page cannot fall behind the code unseen."""

from __future__ import annotations

import inspect
import sys
import unittest
from pathlib import Path

# The package of this checkout, however unittest was started (-s/-t or not), never an installed one.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import motiond  # noqa: E402

PAGE = Path(__file__).resolve().parents[3] / "docs/clients-python.md"


def keywords(function: object) -> list[str]:
    return [name for name, parameter in inspect.signature(function).parameters.items()  # type: ignore[arg-type]
            if parameter.kind in (parameter.KEYWORD_ONLY, parameter.POSITIONAL_OR_KEYWORD) and name != "self"]


class Page(unittest.TestCase):
    def test_every_keyword_of_the_public_calls_is_on_the_page(self) -> None:
        page = PAGE.read_text()
        calls = {"Client()": motiond.Client.__init__, "Client.subscribe": motiond.Client.subscribe,
                 "SyncClient.subscribe": motiond.SyncClient.subscribe}
        for call, function in calls.items():
            for name in keywords(function):
                if name not in ("path", "patterns"):
                    # Named in code (`name`) or given in an example (name=…).
                    self.assertTrue(f"`{name}`" in page or f"{name}=" in page,
                                    f"{call}'s keyword {name} is not in {PAGE.name}")

    def test_the_client_codes_are_on_the_page(self) -> None:
        page = PAGE.read_text()
        for code in sorted(motiond.CLIENT_CODES):
            self.assertTrue(f"`{code}`" in page, f"the code {code} is not in {PAGE.name}")


if __name__ == "__main__":
    unittest.main()
