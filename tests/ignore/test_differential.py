"""Differential test: bot.ignore.rules against git itself on generated pattern sets and file trees.

Every case lives in its own directory ``cNNNN/`` of one temporary repository, with its patterns
as ``cNNNN/.gitignore``; a single ``git ls-files -o --exclude-standard`` tells which generated
files git ignores. The matcher is built from *all* rules (denied ones such as ``*`` included)
and must ignore exactly the same files. Reproduce a failure with ``ICHOR_IGNORE_SEED=<seed>``.
"""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

from bot.ignore.rules import IgnoreMatcher, read_rules
from bot.paths import decode_path, display_path

SEED = int(os.environ.get("ICHOR_IGNORE_SEED", "20240611"))
GENERATED_CASES = 400
MIXED_CASES = 100

# Name atoms: specials of the pattern language, spaces, dashes, dots, a tab, non-ASCII (é, ü,
# and à whose UTF-8 ends in the byte 0xa0, a no-break space in Latin-1) and non-UTF-8 bytes.
ATOMS = [
    b"a", b"b", b"c", b"ab", b"foo", b"bar", b"keep", b"x.txt", b"k.yaml", b"v.yml", b"1",
    b"x9", b"A", b"Zz", b"a b", b" s", b"s ", b"-d", b"--x", b"#h", b"!n", b"[x]", b"]",
    b"[", b"*", b"s*t", b"q?", b"\\", b"b\\s", b".d", b"..e", b"^", b":", b"~", b"t\tb",
    b"\xc3\xa9", b"\xc3\xbc", b"\xc3\xa0", b"caf\xc3\xa9", b"\xff", b"l\xe9t", b"\x85",
]  # fmt: skip
SPECIAL = b"*?[\\"
CLASSES = [b"alnum", b"alpha", b"blank", b"cntrl", b"digit", b"graph", b"lower", b"print",
           b"punct", b"space", b"upper", b"xdigit"]  # fmt: skip
JUNK = [b"a", b"b", b"*", b"**", b"?", b"[", b"]", b"!", b"^", b"-", b"\\", b"/", b":", b" ",
        b"#", b"[:alpha:]", b"[:digit:]", b"[:", b":]", b"[\\", b"\\]", b"-]", b"[!", b"//",
        b"\t", b"\xc3\xa9", b"\xff", b"foo"]  # fmt: skip

# Hand-written edge cases: (patterns, files).
EDGE_CASES: list[tuple[bytes, list[bytes]]] = [
    (b"foo/**\n!foo/keep\n", [b"foo/keep", b"foo/x", b"foo/sub/keep", b"foo/sub/y"]),
    (b"foo/**/\n", [b"foo/x", b"foo/d/x", b"foo/d/e/x"]),
    (b"d\n!d/f\n", [b"d/f", b"d/g", b"e/d/f"]),
    (b"x\n!x/\n", [b"x/f", b"y/x/g"]),
    (b"*\n!*/\n!*.keep\n", [b"a.keep", b"b", b"d/c.keep", b"d/e", b"d/f/g.keep"]),
    (b"[[:digit:]]*\n[[:upper:]][[:lower:]]\n", [b"1a", b"a1", b"9", b"x/2b", b"Ab", b"AB"]),
    (b"[[:alpha:]]\n[[:space:]]x\n", [b"a", b"\xc3\xa9", b"\xff", b" x", b"\tx", b"\x0bx"]),
    (b"[[:foo:]]\n[[:a]\n[[:]\nb[[:digit:]\n", [b"[", b":", b"a", b"f", b"b1", b"b["]),
    (b"a  \nb\\ \nc\\  \nd \\ \n", [b"a", b"a  ", b"b", b"b ", b"c ", b"c  ", b"d  ", b"d"]),
    (b"e\t\n", [b"e", b"e\t"]),
    (b"\\#x\n\\!y\n#z\n !w\n", [b"#x", b"!y", b"#z", b"!w", b" !w", b"w"]),
    (b"[!a]\n[^b]x\n", [b"a", b"b", b"ax", b"bx", b"\xc3\xa9", b"\xffx"]),
    (
        b"[a-c]z\n[c-a]y\n[a-]w\n[]a]v\n[!]b]u\n",
        [b"bz", b"dz", b"by", b"cy", b"-w", b"]v", b"]u", b"cu"],
    ),
    (b"[\\]]x\n[a\\-c]y\n[\\\\]z\n", [b"]x", b"-y", b"by", b"cy", b"\\z"]),
    (b"[a-c-e]x\n[a[:foo:]]y\n[\\a-c]z\n", [b"bx", b"-x", b"dx", b"ex", b"ay", b"bz"]),
    (b"\t\n \n", [b"\t", b" "]),
    (b"a/**/b\n", [b"a/b", b"a/x/b", b"a/x/y/b", b"b", b"x/a/b"]),
    (b"**/a\n**/b/**\n", [b"a", b"x/a", b"x/y/a", b"b/c", b"x/b/c/d"]),
    (b"/a\n/x/\n", [b"a", b"y/a", b"x/f", b"y/x/f"]),
    (b"a/\n", [b"x/a", b"y/a/f"]),
    (b"\\\na\\\n\\ \n", [b"\\", b"a", b"a\\", b" "]),
    (b"[a\nb[\n", [b"[a", b"a", b"b["]),
    (b"a\r\nb\r\n", [b"a", b"b", b"a\r"]),
    (b"\xef\xbb\xbf#c\nd\n", [b"#c", b"d"]),
    (b"e\n\xef\xbb\xbff\n", [b"e", b"f"]),
    (b"***\n!x\n", [b"x", b"y", b"d/x"]),
    (b"a/***/b\n", [b"a/b", b"a/x/b", b"a/x/y/b"]),
    (b"!\n!a\n", [b"a", b"!a"]),
    (
        b"foo**/bar\n",
        [b"foobar", b"foo/bar", b"foox/bar", b"foox/y/bar", b"foo/x/bar", b"x/foobar"],
    ),
    (b"x/foo**\n!x/foox/\n", [b"x/foo", b"x/foox/y", b"x/foox/z/w", b"x/fo"]),
    (b"a/**\\/b\n", [b"a/b", b"a/x/b", b"a/x/y/b"]),
    (b"a\\/b\n\\/c\n", [b"a/b", b"x/a/b", b"c"]),
    (b"x[a/b]y\n[z/]w\n", [b"xay", b"xby", b"d/xay", b"zw", b"d/zw"]),
    (b"foo**//\n", [b"foo/x", b"foox/y", b"foo.txt"]),
    (b"/\n//a\na//\n", [b"a", b"d/a/b"]),
    (b"**foo\n", [b"xfoo", b"d/xfoo", b"foo/x"]),
    (b"?\ncaf?\ncaf??\n", [b"a", b"\xc3\xa9", b"\xff", b"caf\xc3\xa9", b"caf\xe9"]),
    (b"\xff\nl\xe9*\n", [b"\xff", b"a\xff", b"l\xe9t", b"d/l\xe9"]),
    (b"**/\n", [b"a", b"d/a", b"d/e/f"]),
    (b"*/\n", [b"a", b"d/a"]),
    (b"/*\n!/d\n", [b"a", b"d/a", b"e/b"]),
    (b"*.yaml\n!keep.yaml\n**/*.yml\n", [b"a.yaml", b"keep.yaml", b"d/b.yaml", b"d/c.yml"]),
    (b"*\n!/d/\n!/d/**\n", [b"a", b"d/a", b"d/e/f"]),
    # After the prefix quirk's "``**/`` matches nothing" shortcut, a ``**`` is special again.
    (b"/.****/**\n", [b"..e", b".x/y", b"x", b"y/.z"]),
    (b"foo**/**\nbar**/**/\n", [b"foo", b"foox/y", b"fo", b"bar/x", b"barx/y", b"barz"]),
    # Hostile patterns (a backtracking matcher never finishes some of these) and long names.
    (b"a*a*a*a*a*a*a*a*b\n", [b"a" * 60, b"a" * 250, b"a" * 250 + b"b", b"d/" + b"a" * 9 + b"b"]),
    (b"/**/a*a*a*/**/b\n", [b"a/" * 30 + b"b", b"aaa/" * 30 + b"b", b"aaa/" * 30 + b"c"]),
    (b"**/x*[[:alpha:]]*?*y\n!**/q*\n", [b"x" + b"a" * 200 + b"y", b"q/x" + b"ab" * 90 + b"y"]),
    # Lines the matcher looks up by different keys (a literal name, prefix or suffix, a first
    # segment after ``**/``, an anchored literal directory) overriding each other.
    (
        b"*.txt\n!keep*\n/d/keep.txt\n**/k/keep.txt\n!/d/\n",
        [b"a.txt", b"keep.txt", b"d/keep.txt", b"d/a.txt", b"e/keep.txt", b"e/k/keep.txt"],
    ),
    (
        b"/a/b/c\n/a/*/d/\n!/a/x/d/e\n/a/y\n",
        [b"a/b/c", b"a/b/cc", b"a/x/d/e", b"a/z/d/f", b"a/y/g", b"b/a/b/c", b"a/b/c2/x"],
    ),
    (
        b"**/a/b/*.log\n!**/b/keep.log\n**/a/**/z\n",
        [b"a/b/x.log", b"q/a/b/keep.log", b"a/a/b/y.log", b"a/q/b/x.log", b"a/z", b"x/a/y/y/z"],
    ),
    (b"ab*\n*ab\nab\n!a*b\n", [b"ab", b"abab", b"aXb", b"xab", b"abx", b"d/ab", b"d/aab"]),
    (
        b"build/\n*.d/\ntmp*/\n**/cache/\n",
        [b"build", b"x/build/y", b"a.d/f", b"a.d2/f", b"tmpx/f", b"tmp", b"q/cache/f", b"cache"],
    ),
]


def _name(rng: random.Random) -> bytes:
    while True:
        name = b"".join(rng.choice(ATOMS) for _ in range(rng.choice((1, 1, 2))))
        if name not in (b".", b"..") and not name.lower().startswith(b".git"):
            return name


def _tree(rng: random.Random) -> list[bytes]:
    dirs = [b""]
    for _ in range(rng.randint(0, 6)):
        parent = rng.choice([d for d in dirs if d.count(b"/") < 3])
        path = parent + b"/" + _name(rng) if parent else _name(rng)
        if path not in dirs:
            dirs.append(path)
    files: list[bytes] = []
    for _ in range(rng.randint(3, 12)):
        parent = rng.choice(dirs)
        path = parent + b"/" + _name(rng) if parent else _name(rng)
        if path not in dirs and path not in files and path != b".gitignore":
            files.append(path)
    return files


def _escape(rng: random.Random, text: bytes) -> bytes:
    if rng.random() < 0.1:
        return text  # unescaped: ``*``, ``?``, ``[``, ``\`` in names become pattern syntax
    out = b""
    for byte in text:
        char = bytes([byte])
        escape = byte in SPECIAL or (char in b"#! " and rng.random() < 0.7) or rng.random() < 0.03
        out += b"\\" + char if escape else char
    return out


def _bracket(rng: random.Random, char: bytes) -> bytes:
    r = rng.random()
    if r < 0.3:
        member = rng.choice((char, char, b"\\" + char))
        return b"[" + member + rng.choice((b"", b"a", b"xy", b"-", b"]", b"a-c-e")) + b"]"
    if r < 0.45:
        other = rng.choice((b"a", b"b", b"z", b"\xc3", b"^"))
        return b"[" + rng.choice((b"!", b"^")) + other + b"]"
    if r < 0.6:
        low, high = max(char[0] - rng.randint(0, 2), 1), min(char[0] + rng.randint(0, 2), 255)
        if bytes([low]) in b"/]" or bytes([high]) in b"/]":
            return b"?"
        return b"[" + bytes([low]) + b"-" + bytes([high]) + b"]"
    negate = rng.choice((b"", b"", b"!", b"^"))
    classes = b"".join(b"[:" + rng.choice(CLASSES) + b":]" for _ in range(rng.randint(1, 2)))
    return b"[" + negate + classes + rng.choice((b"", b"", b"_")) + b"]"


def _segment(rng: random.Random, seg: bytes) -> bytes:
    r = rng.random()
    if r < 0.35:
        return _escape(rng, seg)
    if r < 0.45:
        return b"*"
    if r < 0.5:
        return rng.choice((b"**", b"***"))
    out = b""
    cut = rng.random()
    for i, byte in enumerate(seg):
        char = bytes([byte])
        c = rng.random()
        if cut < 0.2 and i == len(seg) - 1:
            out += b"*"  # prefix*
        elif cut > 0.85 and i == 0:
            out += rng.choice((b"*", b"**"))  # *suffix
        elif c < 0.15:
            out += b"?"
        elif c < 0.35:
            out += _bracket(rng, char)
        else:
            out += _escape(rng, char)
    return out


def _from_tree(rng: random.Random, files: list[bytes]) -> bytes:
    segs = rng.choice(files).split(b"/")
    as_dir = len(segs) > 1 and rng.random() < 0.4
    if as_dir:
        segs = segs[: rng.randint(1, len(segs) - 1)]
    if rng.random() < 0.5:
        segs = segs[rng.randint(0, len(segs) - 1) :]
    out = [_segment(rng, seg) for seg in segs]
    r = rng.random()
    if r < 0.1:
        out.insert(0, b"**")
    elif r < 0.2 and len(out) > 1:
        out.insert(rng.randint(1, len(out) - 1), b"**")
    elif r < 0.27:
        out.append(b"**")
    elif r < 0.32:
        i = rng.randrange(len(out))
        out[i] += rng.choice((b"**", b"***"))  # ``foo**/bar``: git's prefix quirk
    elif r < 0.35:
        out.insert(rng.randint(0, len(out)), b"**\\")  # ``**\/``
    pattern = b"/".join(out)
    if rng.random() < 0.25:
        pattern = b"/" + pattern
    if rng.random() < 0.15 or (as_dir and rng.random() < 0.4):
        pattern += b"/"
    if rng.random() < 0.3:
        pattern = b"!" + pattern
    if rng.random() < 0.1:
        pattern += rng.choice((b" ", b"  ", b"\\ ", b"\t", b" \\ ", b"\\"))
    return pattern


def _patterns(rng: random.Random, files: list[bytes]) -> bytes:
    lines: list[bytes] = []
    for _ in range(rng.randint(1, 6)):
        r = rng.random()
        if r < 0.07:
            lines.append(rng.choice((b"", b"#" + _name(rng), b"  ", b"\\", b"!", b"/", b"[")))
        elif r < 0.17:
            lines.append(b"".join(rng.choice(JUNK) for _ in range(rng.randint(1, 6))))
        elif r < 0.2:
            lines.append(rng.choice((b"*", b"**", b"/*", b"*/", b"**/*", b"!*", b"!*/")))
        else:
            lines.append(_from_tree(rng, files))
    text = b"".join(line + rng.choice((b"\n", b"\n", b"\n", b"\r\n")) for line in lines)
    if rng.random() < 0.1:
        text = text.rstrip(b"\n")
    return (b"\xef\xbb\xbf" + text) if rng.random() < 0.05 else text


def _git_ignored(repo: Path, cases: list[tuple[bytes, list[bytes]]]) -> list[set[bytes]]:
    env = {
        **os.environ,
        "HOME": str(repo.parent),
        "XDG_CONFIG_HOME": str(repo.parent),
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    for key in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_CONFIG_GLOBAL"):
        env.pop(key, None)
    subprocess.run(["git", "init", "-q", str(repo)], check=True, env=env)
    root = bytes(repo)
    for number, (patterns, files) in enumerate(cases, start=1):
        case = os.path.join(root, b"c%04d" % number)
        parents = {os.path.dirname(os.path.join(case, rel)) for rel in files}
        for directory in sorted(parents | {case}):
            os.makedirs(directory, exist_ok=True)
        with open(os.path.join(case, b".gitignore"), "wb") as handle:
            handle.write(patterns)
        for rel in files:
            os.close(os.open(os.path.join(case, rel), os.O_CREAT | os.O_WRONLY, 0o644))
    config = ["-c", "core.excludesFile=/dev/null", "-c", "core.ignoreCase=false"]
    listed = subprocess.run(
        ["git", *config, "ls-files", "-o", "--exclude-standard", "-z"],
        cwd=repo,
        env=env,
        check=True,
        capture_output=True,
    ).stdout.split(b"\0")
    kept: set[bytes] = {path for path in listed if path}
    return [
        {rel for rel in files if b"c%04d/%s" % (number, rel) not in kept}
        for number, (_, files) in enumerate(cases, start=1)
    ]


def _report(number: int, patterns: bytes, files: list[bytes], git: set[bytes]) -> str | None:
    rules = read_rules(decode_path(patterns))
    matcher = IgnoreMatcher(rules)
    surveyed = IgnoreMatcher(rules).survey([decode_path(rel) for rel in files]).rules
    lines = []
    for rel in files:
        path = decode_path(rel)
        rule = matcher.rule_for(path)
        assert rule is None or not rule.negated
        if (rule is not None) != (rel in git) or (surveyed[path] is not None) != (rel in git):
            decided = f" (by line {rule.line}: {display_path(rule.pattern)!r})" if rule else ""
            lines.append(f"    {display_path(path)!r}: git ignored={rel in git}{decided}")
    if not lines:
        return None
    shown = "\n".join(f"    | {line!r}" for line in patterns.split(b"\n"))
    return f"  case c{number:04d}, patterns:\n{shown}\n" + "\n".join(lines)


def test_matcher_agrees_with_git(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    cases = list(EDGE_CASES)
    for _ in range(GENERATED_CASES):
        files = _tree(rng)
        cases.append((_patterns(rng, files), files))
    # Several generated files' lines in one: lines of every shape override one another.
    for _ in range(MIXED_CASES):
        files = _tree(rng)
        text = b"".join(_patterns(rng, files) + b"\n" for _ in range(rng.randint(3, 6)))
        cases.append((text, files))
    git = _git_ignored(tmp_path / "repo", cases)
    failures = [
        report
        for number, ((patterns, files), ignored) in enumerate(zip(cases, git, strict=True), 1)
        if (report := _report(number, patterns, files, ignored)) is not None
    ]
    ignored_total = sum(len(ignored) for ignored in git)
    total = sum(len(files) for _, files in cases)
    assert ignored_total > total // 5, "the generator should make matches frequent"
    assert not failures, (
        f"ICHOR_IGNORE_SEED={SEED}: {len(failures)} of {len(cases)} cases disagree with git\n"
        + "\n".join(failures[:15])
    )
