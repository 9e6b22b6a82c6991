"""Fixes a person can paste: shell words, ``.gittargetignore`` lines and the commands using them.

Pure: paths in, strings out. Every command names its paths as single shell words, so a name
with spaces, glob characters, quotes or bytes that are not UTF-8 pastes as it is.
"""

from __future__ import annotations

import posixpath
import shlex
from collections.abc import Sequence

from bot.paths import encode_path

_GLOB_SPECIALS = frozenset("*?[\\")
# SOPS encrypts only the values of these keys, so apiVersion, kind and metadata stay clear
# and the object keeps its identity.
SOPS_ENCRYPTED_REGEX = "^(data|stringData)$"


def shell_word(path: str) -> str:
    """A shell word for ``path``; names that are not printable ASCII use ``$'...'`` escapes."""
    raw = encode_path(path)
    if raw.isascii() and raw.decode().isprintable():
        return shlex.quote(path)
    return "$'" + "".join(_shell_char(b) for b in raw) + "'"


def _shell_char(byte: int) -> str:
    ch = chr(byte)
    if 0x20 <= byte < 0x7F and ch not in "'\\":
        return ch
    return f"\\x{byte:02x}"


def _path_word(path: str) -> str:
    """A path argument no command can take for an option."""
    return shell_word("./" + path if path.startswith("-") else path)


def ignore_pattern_for(rel_path: str) -> str:
    """An anchored ``.gittargetignore`` line that matches ``rel_path`` and can be typed.

    Glob characters are escaped. A byte that is not UTF-8 or an ASCII control character becomes
    ``?`` (one byte, for git and for the matcher alike); a run of other invisible characters
    becomes ``*``, since a line of the file cannot show them.
    """
    out: list[str] = []
    for ch in rel_path:
        code = ord(ch)
        if ch in _GLOB_SPECIALS:
            out.append("\\" + ch)
        elif 0xDC80 <= code <= 0xDCFF or code < 0x20 or code == 0x7F:
            out.append("?")
        elif not ch.isprintable() and ch != " ":
            if not out or out[-1] != "*":
                out.append("*")
        else:
            out.append(ch)
    escaped = "".join(out)
    if escaped.endswith(" "):
        escaped = escaped[:-1] + "\\ "
    return "/" + escaped


def append_lines_command(ignore_file: str, lines: Sequence[str]) -> str:
    """A command that appends ``lines`` to ``ignore_file`` exactly, one per line.

    ``printf '%s\\n'`` writes each argument as it is (no escapes, no leading spaces). The first
    argument is empty so the new lines never join a last line that has no newline; git skips
    the blank line.
    """
    words = " ".join(shell_word(line) for line in lines)
    return f"printf '%s\\n' '' {words} >> {shell_word(ignore_file)}"


def suggest_capabilities_command(target_path: str, capabilities: str | None) -> str:
    """``ichor-bot types --suggest`` for a target, run at the repository's root: it writes the
    target's capabilities file (its own, else one beside the target), for a person to review.
    The whole-repository target gets the text on standard output: no file in the repository
    can be outside it."""
    path = target_path or "."
    # A path that starts with '-' would read as an option; the '=' form keeps it a value.
    flag = "--path=" if path.startswith("-") else "--path "
    words = ["ichor-bot types --suggest", flag + shell_word(path)]
    output = capabilities or (f"{target_path}.capabilities.txt" if target_path else None)
    if capabilities is not None:
        words.append(f"--capabilities {_path_word(capabilities)}")
    if output is not None:
        words.append(f"--output {_path_word(output)}")
    return " ".join(words)


def sops_encrypt_command(path: str) -> str:
    """Encrypt a file in place so that only its ``data`` and ``stringData`` are ciphertext."""
    regex = shlex.quote(SOPS_ENCRYPTED_REGEX)
    return f"sops --encrypt --encrypted-regex {regex} --in-place {_path_word(path)}"


def sops_reencrypt_command(path: str) -> str:
    """Decrypt a file whose identity is encrypted, then encrypt only its data again."""
    word = _path_word(path)
    return f"sops --decrypt --in-place {word} && {sops_encrypt_command(path)}"


def rename_fix(field: str, suggestion: str | None) -> str:
    """Rename to a valid name; the suggestion is the refused one made valid, when it can be."""
    example = f" (for example '{suggestion}')" if suggestion else ""
    return f"Set {field} to a name the API server accepts{example}, and rename what refers to it."


def git_rm_command(paths: Sequence[str]) -> str:
    """Remove ``paths`` from the index and the work tree."""
    return "git rm -q -- " + " ".join(shell_word(p) for p in paths)


def kustomize_render_command(
    kustomization: str,
    output: str,
    frees: Sequence[str],
    *,
    helm: bool = False,
    loose: bool = False,
) -> str:
    """Render a kustomization's folder into ``output``, remove the files only it read, and
    rewrite the kustomization (same name) to list only the output: a kustomization that lists
    the folder still builds the same objects.

    ``helm`` inflates Helm charts (``--enable-helm``); ``loose`` lets it read files outside the
    folder, as Flux builds (``--load-restrictor LoadRestrictionsNone``).
    """
    folder = posixpath.dirname(kustomization) or "."
    flags = " --enable-helm" * helm + " --load-restrictor LoadRestrictionsNone" * loose
    steps = [f"kubectl kustomize{flags} {_path_word(folder)} > {shell_word(output)}"]
    if frees:
        steps.append(git_rm_command(frees))
    listed = shell_word("- " + posixpath.basename(output))
    steps.append(f"printf '%s\\n' 'resources:' {listed} > {shell_word(kustomization)}")
    return " && ".join(steps)
