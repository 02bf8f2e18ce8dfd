"""The names of DeepGEMM's surface tessera does not implement (tessera/_pending.py) exist and raise
NotImplementedError naming the function."""
import pytest

pytest.importorskip("torch")
import tessera  # noqa: E402
from tessera import _pending  # noqa: E402


@pytest.mark.parametrize("name", _pending.NOT_IMPLEMENTED)
def test_unimplemented_names_say_so(name):
    with pytest.raises(NotImplementedError, match=f"tessera.{name}: not implemented in this version"):
        getattr(tessera, name)()
