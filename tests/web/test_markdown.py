"""The status page's markdown subset: the bot's own summaries readable, nothing else markup."""

from __future__ import annotations

import re

from bot.web.markdown import inline, render

SUMMARY = """\
| Target | Path | At head | New issues |
| --- | --- | --- | ---: |
| prod | <code>clusters/prod</code> | ❌ refused | 1 |

Checked <code>e2991d6</code> against base <code>691588f</code>.

### How to fix

- **`plaintext-secret`** (1 new): A sensitive object stored in plain text.
  - **Fix:** Encrypt the file with SOPS (`sops --encrypt --in-place`).
"""


def _tags(html: str) -> set[str]:
    return set(re.findall(r"</?([a-z0-9]+)", html))


def test_the_bots_summary_reads_as_it_does_on_a_forge() -> None:
    html = str(render(SUMMARY))
    assert html.startswith("<table><thead><tr><th>Target</th>")
    glyph = '<span class="glyph" aria-hidden="true">✗</span>'
    assert f"<td><code>clusters/prod</code></td><td>{glyph} refused</td><td>1</td>" in html
    assert "<p>Checked <code>e2991d6</code> against base <code>691588f</code>.</p>" in html
    assert "<h5>How to fix</h5>" in html
    assert "<ul><li><strong><code>plaintext-secret</code></strong> (1 new)" in html
    assert "<ul><li><strong>Fix:</strong> Encrypt the file with SOPS " in html
    assert "<code>sops --encrypt --in-place</code>" in html
    assert html.endswith("</li></ul></li></ul>")
    assert _tags(html) <= {"table", "thead", "tbody", "tr", "th", "td", "code", "p", "h5"} | {
        "ul",
        "li",
        "strong",
        "span",  # the glyph, aria-hidden beside its word
    }


def test_emphasis_as_the_summaries_write_it_and_no_stray_asterisk() -> None:
    item = "- <code>a.txt</code>:3 — `foreign-file` — not YAML *(already on base)*"
    html = str(render(item))
    assert html == (
        "<ul><li><code>a.txt</code>:3 — <code>foreign-file</code> — not YAML "
        "<em>(already on base)</em></li></ul>"
    )
    assert "*" not in html
    # A lone asterisk, a glob, a product and one inside a word or code stay as they are.
    for text in ("pattern *.yaml and *.yml", "2 * 3 * 4", "a*b*c", "`*x*`"):
        assert "<em>" not in str(render(text)), text
    assert str(render("*<script>*")) == "<p><em>&lt;script&gt;</em></p>"


def test_glyphs_are_text_symbols_and_decoration_beside_their_word() -> None:
    html = str(render("| ✅ accepted | ⚠️ warning | ❌ refused |"))
    assert '<span class="glyph" aria-hidden="true">✓</span> accepted' in html
    assert '<span class="glyph" aria-hidden="true">⚠</span> warning' in html
    assert '<span class="glyph" aria-hidden="true">✗</span> refused' in html
    assert "✅" not in html and "️" not in html  # no emoji, no variation selector left


def test_names_carried_as_references_show_as_text() -> None:
    # What render.py posts for a file named <script>|x: references inside <code>.
    html = str(render("| <code>a/&#60;script&#62;&#124;x</code> | &#60;img src=x&#62; |"))
    assert "<code>a/&lt;script&gt;|x</code>" in html
    assert "<td>&lt;img src=x&gt;</td>" in html
    assert "<script" not in html and "<img" not in html


def test_raw_markup_links_and_attributes_stay_text() -> None:
    hostile = (
        "<script>alert(1)</script> <img src=x onerror=alert(2)> [x](javascript:alert(3)) "
        '<a href="https://e.example">a</a> <code onclick="x">c</code> `<b>` '
        "<!-- comment --> &lt;i&gt; <wbr>"
    )
    html = str(render(hostile + "\n\n# " + hostile + "\n- " + hostile))
    assert _tags(html) <= {"p", "h3", "ul", "li", "code"}
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "onerror" not in html.replace("onerror=alert(2)&gt;", "")
    assert "<code>&lt;b&gt;</code>" in html
    assert "href" not in html.replace('href="https://e.example"&gt;', "").replace("&lt;a ", "")


def test_unclosed_code_and_bold_are_text() -> None:
    assert inline("a <code>b `c") == "a &lt;code&gt;b `c"
    assert inline("**a** **b") == "<strong>a</strong> **b"
    assert inline("x\x00y") == "xy"


def test_a_hostile_line_is_handled_in_one_pass() -> None:
    # Many openers with no closer, and many bold markers: each is looked at once.
    line = "<code>" * 20_000 + "`" + "**a" * 20_000
    html = str(render(line + "\n" + "| " * 20_000))
    assert html.count("&lt;code&gt;") == 20_000
    assert html.count("<td>") == 19_999  # cells between 20,000 bars
