"""The names awaiting their GPU run (tessera/_pending.py): each public name raises NotImplementedError naming its
implementation, and each implementation it names exists, so the GPU verification run (tools/deepgemm_tests.py
--with-pending) tests what will be routed."""
import importlib

import pytest

pytest.importorskip("torch")
import tessera  # noqa: E402
from tessera import _pending  # noqa: E402


@pytest.mark.parametrize("name", sorted(_pending.AWAITING_GPU))
def test_awaiting_names_raise_naming_an_existing_implementation(name):
    module, function = _pending.AWAITING_GPU[name].split(":")
    assert callable(getattr(importlib.import_module(f"tessera.{module}"), function))
    with pytest.raises(NotImplementedError, match=f"tessera.{name}: implemented as tessera.{module}.{function}"):
        getattr(tessera, name)()


def test_unimplemented_names_say_so():
    for name in _pending.NOT_IMPLEMENTED:
        with pytest.raises(NotImplementedError, match="not implemented in this version"):
            getattr(tessera, name)()
