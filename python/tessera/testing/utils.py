"""Test-selection helpers: get_arch_major, test_filter, ignore_env."""
import functools
import os

import torch

__all__ = ['get_arch_major', 'test_filter', 'ignore_env']


def get_arch_major() -> int:
    return torch.cuda.get_device_capability()[0]


def _describe(condition) -> str:
    name = getattr(condition, '__qualname__', repr(condition))
    return name if name != '<lambda>' else 'a lambda condition'


def test_filter(condition):
    """Decorator: run the test only if condition() is true; otherwise print why and return None."""
    def decorator(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            if condition():
                return func(*args, **kwargs)
            print(f'{func.__name__}:')
            print(f' > Filtered by {_describe(condition)}')
        return wrapper
    return decorator


# Not a pytest test despite the name (it is imported into test modules by star-import).
test_filter.__test__ = False


def ignore_env(name: str, condition):
    """Decorator: when condition() is true, unset env var `name` for the duration of the call."""
    def decorator(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            if not condition():
                return func(*args, **kwargs)
            saved = os.environ.pop(name, None)
            try:
                return func(*args, **kwargs)
            finally:
                if saved is not None:
                    os.environ[name] = saved
        return wrapper
    return decorator
