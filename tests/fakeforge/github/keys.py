"""The app's RSA keys: a fresh one as GitHub hands an app, one shared per test process."""

from __future__ import annotations

import functools
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa


def new_private_key() -> str:
    """A fresh RSA key (PKCS#8 PEM), as GitHub hands an app."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()


@functools.cache
def shared_private_key() -> str:
    """One key per test process: generating costs ~50 ms, and a fake's key is no secret."""
    return new_private_key()


@functools.cache
def private_key(pem: str) -> Any:
    """Loading a PEM checks the key (~20 ms with OpenSSL 3): once per key and process."""
    return serialization.load_pem_private_key(pem.encode(), password=None)


@functools.cache
def public_pem(private_pem: str) -> str:
    public = private_key(private_pem).public_key()
    pem: bytes = public.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return pem.decode()
