#!/usr/bin/env python3
"""Generate tests/secrets/corpus.json: fake credentials in the shapes of the
public secret rule sets, look-alikes that must survive, and the text contexts
they are pasted in.

    python3.11 tests/secrets/make_corpus.py                 # seed 1 -> tests/secrets/corpus.json
    python3.11 tests/secrets/make_corpus.py --seed 7 --out /tmp/corpus.json

Stdlib only, deterministic: the same seed gives the same bytes.

The shapes follow gitleaks' rule definitions (cmd/generate/config/rules/*.go,
the global allowlist in cmd/generate/config/base) and detect-secrets' plugins
(detect_secrets/plugins/*.py), read by a person and re-expressed here as
generators; no rule code and no test string of either project is copied.
Every value is drawn from ``random.Random(seed)``: shaped like a credential,
valid nowhere.  The few fixed strings are vendors' own *documentation*
placeholders (AWS's ``AKIAIOSFODNN7EXAMPLE``, Stripe's published test key,
Slack's ``T00000000/B00000000/XXXX…`` webhook, …), listed as negatives.

Output (``json.dumps(indent=1, sort_keys=True, ensure_ascii=False)`` + newline)::

    {"seed", "generator",
     "families":  {name: {"sources": [...], "note": str, "hard": bool}},
     "positives": [{"id", "family", "shape", "value", "text"[, "also_secret"]}],
     "negatives": [{"id", "family", "kind", "why", "text"}],
     "contexts":  [{"id", "template", "applies", "placements", "note"[, "transform"]}]}

* ``value`` is the secret material that must vanish from every output; ``text``
  is how it is written (the token itself, or a form around it).  Where a text
  holds a second secret (an AWS key id beside its secret key), it is listed in
  ``also_secret`` and must vanish too.
* ``hard`` families have no distinctive prefix; recall on them is reported,
  not claimed.
* negative ``kind``: ``lookalike`` (a shape a rule set lists as a false
  positive, or ours), ``placeholder`` (a documented example or placeholder the
  rule sets allow-list), ``ours`` (shapes from agent transcripts).
* context ``applies``: ``all`` | ``single_line`` (texts without a line break)
  | ``url_safe`` (texts of ``[A-Za-z0-9._~:-]`` only); ``placements``:
  ``any`` or the placements where the context can arise (the JSON-escape
  contexts exist only in a tool call's raw JSON arguments); ``transform``:
  ``percent_encode`` = substitute ``urllib.parse.quote(text, safe="")``.

Invariants (asserted): positive values (and ``also_secret``) are unique; every
value is a substring of its text; no negative text and no context template
shares a 12-character substring with any value.
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import string
import sys
import urllib.parse
from pathlib import Path

HERE = Path(__file__).resolve().parent
GENERATOR = "tests/secrets/make_corpus.py"

UPPER = string.ascii_uppercase
LOWER = string.ascii_lowercase
DIGITS = string.digits
LETTERS = UPPER + LOWER
ALNUM = LETTERS + DIGITS
LOWER_ALNUM = LOWER + DIGITS
UPPER_ALNUM = UPPER + DIGITS
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
AWS_BODY = UPPER + "234567"
BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"
URL_SAFE = set(ALNUM + "._~:-")

GRAM = 12  # the invariant's substring length


class Gen:
    """Seeded draws of characters, bytes and small structures."""

    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)

    def s(self, alphabet: str, n: int) -> str:
        return "".join(self.r.choice(alphabet) for _ in range(n))

    def mixed(self, alphabet: str, n: int) -> str:
        """``n`` characters of ``alphabet`` holding at least one digit and one letter."""
        assert any(c.isdigit() for c in alphabet) and any(c.isalpha() for c in alphabet), alphabet
        while True:
            out = self.s(alphabet, n)
            if any(c.isdigit() for c in out) and any(c.isalpha() for c in out):
                return out

    def b(self, n: int) -> bytes:
        return bytes(self.r.getrandbits(8) for _ in range(n))

    def pick(self, seq):
        return self.r.choice(seq)

    def num(self, lo: int, hi: int) -> int:
        return self.r.randint(lo, hi)

    def password(self, n: int, symbols: str = "!#%*+-.=?@^_~") -> str:
        """A password with upper, lower, digit and a symbol."""
        while True:
            out = self.s(ALNUM + symbols, n)
            if (any(c.isupper() for c in out) and any(c.islower() for c in out)
                    and any(c.isdigit() for c in out) and any(c in symbols for c in out)):
                return out


def b64url_nopad(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def wrap(body: str, width: int, sep: str = "\n") -> str:
    return sep.join(body[i:i + width] for i in range(0, len(body), width))


def der_len(n: int) -> bytes:
    if n < 0x80:
        return bytes([n])
    if n < 0x100:
        return bytes([0x81, n])
    return bytes([0x82, n >> 8, n & 0xFF])


def crc24(data: bytes) -> int:
    crc = 0xB704CE
    for byte in data:
        crc ^= byte << 16
        for _ in range(8):
            crc <<= 1
            if crc & 0x1000000:
                crc ^= 0x1864CFB
    return crc & 0xFFFFFF


# ---------------------------------------------------------------------------
# families
# ---------------------------------------------------------------------------

FAMILIES: dict[str, dict] = {}
POSITIVES: list[dict] = []
NEGATIVES: list[dict] = []


def family(name: str, sources: list[str], note: str, hard: bool = False) -> None:
    FAMILIES[name] = {"sources": sources, "note": note, "hard": hard}


def pos(fam: str, shape: str, value: str, text: str | None = None, also: list[str] | None = None) -> None:
    n = sum(1 for p in POSITIVES if p["family"] == fam) + 1
    rec = {"id": f"p-{fam}-{n}", "family": fam, "shape": shape, "value": value,
           "text": value if text is None else text}
    if also:
        rec["also_secret"] = also
    POSITIVES.append(rec)


def neg(fam: str, kind: str, why: str, text: str) -> None:
    n = sum(1 for p in NEGATIVES if p["family"] == fam) + 1
    NEGATIVES.append({"id": f"n-{fam}-{n}", "family": fam, "kind": kind, "why": why, "text": text})


def build(g: Gen) -> None:  # noqa: PLR0915 (one long table on purpose)
    # -- OpenAI ------------------------------------------------------------
    family("openai", ["gitleaks:openai-api-key", "detect-secrets:OpenAIDetector"],
           "user/project/service-account/admin keys carry the T3BlbkFJ marker "
           "(base64 of 'OpenAI') between two random halves")
    for pre, half in (("sk-proj-", 74), ("sk-proj-", 58), ("sk-svcacct-", 74), ("sk-admin-", 58)):
        v = pre + g.s(B64URL, half) + "T3BlbkFJ" + g.s(B64URL, half)
        pos("openai", pre.rstrip("-"), v)
    v = "sk-" + g.mixed(ALNUM, 20) + "T3BlbkFJ" + g.mixed(ALNUM, 20)
    pos("openai", "sk", v)
    v = "sk-proj-" + g.s(B64URL, 74) + "T3BlbkFJ" + g.s(B64URL, 74)
    pos("openai", "sk-proj", v, f"OPENAI_API_KEY={v}")
    v = "sk-" + g.mixed(ALNUM, 20) + "T3BlbkFJ" + g.mixed(ALNUM, 20)
    pos("openai", "sk", v, f'client = OpenAI(api_key="{v}")')
    neg("openai", "ours", "library nickname", "sk-learn")
    neg("openai", "ours", "library import name", "sklearn")
    neg("openai", "ours", "hyphenated words around sk-",
        "a risk-free state-of-the-art sk-learn-compatible-estimator-interface")
    neg("openai", "placeholder", "word-only placeholder after sk-", "sk-your-openai-api-key-here")
    neg("openai", "placeholder", "elided key", "sk-...")
    neg("openai", "placeholder", "elided project key", "sk-proj-...")
    neg("openai", "placeholder", "angle-bracket placeholder", "OPENAI_API_KEY=<your-api-key>")
    neg("openai", "placeholder", "${VAR} reference (gitleaks global allowlist)",
        "OPENAI_API_KEY=${OPENAI_API_KEY}")
    neg("openai", "placeholder", "repeated-character placeholder", "sk-" + "x" * 48)

    # -- Anthropic -----------------------------------------------------------
    family("anthropic", ["gitleaks:anthropic-api-key", "gitleaks:anthropic-admin-api-key"],
           "sk-ant-api03- / sk-ant-admin01- + 93 [A-Za-z0-9_-] + AA; sk-ant-oat01- (OAuth "
           "token, same body) is ours")
    for pre in ("sk-ant-api03-", "sk-ant-api03-", "sk-ant-admin01-", "sk-ant-admin01-", "sk-ant-oat01-"):
        v = pre + g.s(B64URL, 93) + "AA"
        pos("anthropic", pre.rstrip("-"), v)
    v = "sk-ant-api03-" + g.s(B64URL, 93) + "AA"
    pos("anthropic", "sk-ant-api03", v, f"export ANTHROPIC_API_KEY='{v}'")
    neg("anthropic", "placeholder", "elided key", "sk-ant-...")
    neg("anthropic", "placeholder", "repeated-character placeholder", "sk-ant-" + "x" * 40)
    neg("anthropic", "placeholder", "$VAR reference (gitleaks global allowlist)", "$ANTHROPIC_API_KEY")

    # -- sk- + hex / alnum (DeepSeek, Moonshot, most OpenAI-compatible providers)
    family("sk_generic", [],
           "no public rule: DeepSeek and many OpenAI-compatible providers issue sk-<32 hex>, "
           "Moonshot-style sk-<48 alnum>; claimable by the sk- prefix and length")
    for _ in range(3):
        pos("sk_generic", "sk-hex32", "sk-" + g.mixed(HEX, 32))
    for _ in range(2):
        pos("sk_generic", "sk-alnum48", "sk-" + g.mixed(ALNUM, 48))
    v = "sk-" + g.mixed(HEX, 32)
    pos("sk_generic", "sk-hex32", v, f"DEEPSEEK_API_KEY={v}")
    neg("sk_generic", "lookalike", "sk- inside a word (task-): no boundary before sk-",
        "task-" + g.mixed(HEX, 32))
    neg("sk_generic", "lookalike", "sk- inside a word (disk-): no boundary", "disk-" + g.mixed(HEX, 32))
    neg("sk_generic", "lookalike", "too short", "sk-1234")

    # -- GitHub --------------------------------------------------------------
    family("github", ["gitleaks:github-pat", "gitleaks:github-oauth", "gitleaks:github-app-token",
                      "gitleaks:github-refresh-token", "gitleaks:github-fine-grained-pat",
                      "detect-secrets:GitHubTokenDetector"],
           "gh[pousr]_ + 36 alnum; github_pat_ + 22 alnum + _ + 59 alnum")
    for p in ("ghp_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_"):
        pos("github", p.rstrip("_"), p + g.mixed(ALNUM, 36))
    for _ in range(2):
        pos("github", "github_pat", "github_pat_11" + g.s(UPPER_ALNUM, 20) + "_" + g.mixed(ALNUM, 59))
    v = "ghp_" + g.mixed(ALNUM, 36)
    pos("github", "ghp", v, f"GITHUB_TOKEN={v}")
    v = "ghs_" + g.mixed(ALNUM, 36)
    pos("github", "ghs", v, f"git clone https://x-access-token:{v}@github.com/acme/infra.git")
    for p in ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"):
        neg("github", "lookalike", "repeated-x placeholder (a gitleaks false-positive shape)", p + "x" * 36)
    neg("github", "lookalike", "repeated-x fine-grained placeholder",
        "github_pat_" + "x" * 22 + "_" + "x" * 59)
    neg("github", "ours", "prefix named in prose", "classic tokens start with ghp_ and fine-grained ones with github_pat_")
    neg("github", "placeholder", "GitHub Actions secret reference (gitleaks global allowlist)",
        "GITHUB_TOKEN=${{ secrets.GITHUB_TOKEN }}")
    neg("github", "placeholder", "angle-bracket placeholder", "ghp_<token>")

    # -- GitLab --------------------------------------------------------------
    family("gitlab", ["gitleaks:gitlab-pat", "gitleaks:gitlab-pat-routable", "gitleaks:gitlab-deploy-token",
                      "gitleaks:gitlab-runner-authentication-token", "gitleaks:gitlab-ptt", "gitleaks:gitlab-rrt",
                      "gitleaks:gitlab-cicd-job-token", "gitleaks:gitlab-feed-token",
                      "gitleaks:gitlab-incoming-mail-token", "gitleaks:gitlab-kubernetes-agent-token",
                      "gitleaks:gitlab-oauth-app-secret", "gitleaks:gitlab-scim-token",
                      "gitleaks:gitlab-feature-flag-client-token", "gitleaks:gitlab-session-cookie",
                      "gitleaks:gitlab-runner-authentication-token-routable",
                      "detect-secrets:GitLabTokenDetector"],
           "gl*- prefixes of GitLab's token table; the session cookie's value is the 32 [0-9a-z]")
    pos("gitlab", "glpat", "glpat-" + g.mixed(ALNUM, 20))
    pos("gitlab", "glpat", "glpat-" + g.mixed(B64URL, 20))
    pos("gitlab", "glpat-routable", "glpat-" + g.mixed(B64URL, 27) + ".01" + g.mixed(LOWER_ALNUM, 7))
    pos("gitlab", "gldt", "gldt-" + g.mixed(ALNUM, 20))
    pos("gitlab", "glrt", "glrt-" + g.mixed(ALNUM, 20))
    pos("gitlab", "glrt-routable", "glrt-t1_" + g.mixed(ALNUM, 27) + ".01" + g.mixed(LOWER_ALNUM, 7))
    pos("gitlab", "glptt", "glptt-" + g.mixed(HEX, 40))
    pos("gitlab", "GR1348941", "GR1348941" + g.mixed(ALNUM, 20))
    pos("gitlab", "glcbt", "glcbt-" + g.mixed(ALNUM, 5) + "_" + g.mixed(ALNUM, 20))
    pos("gitlab", "glft", "glft-" + g.mixed(ALNUM, 20))
    pos("gitlab", "glimt", "glimt-" + g.mixed(ALNUM, 25))
    pos("gitlab", "glagent", "glagent-" + g.mixed(ALNUM, 50))
    pos("gitlab", "gloas", "gloas-" + g.mixed(ALNUM, 64))
    pos("gitlab", "glsoat", "glsoat-" + g.mixed(ALNUM, 20))
    pos("gitlab", "glffct", "glffct-" + g.mixed(ALNUM, 20))
    v = g.mixed(LOWER_ALNUM, 32)
    pos("gitlab", "_gitlab_session", v, f"Cookie: _gitlab_session={v}")
    neg("gitlab", "lookalike", "repeated-X placeholder", "glpat-" + "X" * 20)
    neg("gitlab", "lookalike", "repeated-x placeholder", "glptt-" + "x" * 40)
    neg("gitlab", "lookalike", "repeated-X registration placeholder", "GR1348941" + "X" * 20)
    neg("gitlab", "placeholder", "angle-bracket placeholder", "glpat-<your-token>")

    # -- AWS access key id ------------------------------------------------------
    family("aws_access_key_id", ["gitleaks:aws-access-token", "detect-secrets:AWSKeyDetector"],
           "AKIA/ASIA/ABIA/ACCA + 16 [A-Z2-7], A3T[A-Z0-9] + 16; gitleaks allow-lists ids ending in EXAMPLE")
    for p in ("AKIA", "AKIA", "ASIA", "ABIA", "ACCA"):
        pos("aws_access_key_id", p, p + g.s(AWS_BODY, 16))
    pos("aws_access_key_id", "A3T", "A3T" + g.pick(UPPER_ALNUM) + g.s(AWS_BODY, 16))
    v = "AKIA" + g.s(AWS_BODY, 16)
    pos("aws_access_key_id", "AKIA", v, f"aws_access_key_id = {v}")
    neg("aws_access_key_id", "placeholder", "AWS documentation example key id (gitleaks: .+EXAMPLE$)",
        "AKIAIOSFODNN7EXAMPLE")
    neg("aws_access_key_id", "placeholder", "AWS documentation example key id (gitleaks: .+EXAMPLE$)",
        "AKIAI44QH8DHBEXAMPLE")
    neg("aws_access_key_id", "lookalike", "low-entropy placeholder", "key = AKIAXXXXXXXXXXXXXXXX")
    neg("aws_access_key_id", "ours", "the prefix in prose", "AKIA is a prefix; AKIAshort is not a key")
    neg("aws_access_key_id", "lookalike", "capitals word holding ASIA, wrong length",
        "EURASIANASIAPACIFICTRADEROUTES")
    neg("aws_access_key_id", "lookalike", "ASIA + 16 capitals/digits inside a longer word (no boundary)",
        "ASIA2024CONFERENCEROOMBOOKINGS")

    # -- AWS secret access key -----------------------------------------------------
    family("aws_secret_access_key", ["detect-secrets:AWSKeyDetector"],
           "40 [A-Za-z0-9/+] with no prefix: claimable only by the aws_secret_access_key / "
           "SecretAccessKey name or an access key id beside it (gitleaks 8.x has no rule for it)")

    def aws_secret() -> str:
        return g.mixed(B64, 40)

    kid, v = "AKIA" + g.s(AWS_BODY, 16), aws_secret()
    pos("aws_secret_access_key", "prose", v,
        f"my AWS key id is {kid} and the secret is {v}", also=[kid])
    v = aws_secret()
    pos("aws_secret_access_key", "env", v, f"AWS_SECRET_ACCESS_KEY={v}")
    kid, v = "AKIA" + g.s(AWS_BODY, 16), aws_secret()
    pos("aws_secret_access_key", "ini", v,
        f"[default]\naws_access_key_id = {kid}\naws_secret_access_key = {v}", also=[kid])
    v = aws_secret()
    pos("aws_secret_access_key", "ini", v, f"aws_secret_access_key = {v}")
    kid, v = "ASIA" + g.s(AWS_BODY, 16), aws_secret()
    pos("aws_secret_access_key", "json", v,
        f'{{"AccessKeyId": "{kid}", "SecretAccessKey": "{v}"}}', also=[kid])
    v = aws_secret()
    pos("aws_secret_access_key", "json", v, f'"SecretAccessKey": "{v}"')
    v = aws_secret()
    pos("aws_secret_access_key", "python", v, f"boto3.client('s3', aws_secret_access_key='{v}')")
    neg("aws_secret_access_key", "placeholder", "AWS documentation example secret key",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
    neg("aws_secret_access_key", "placeholder", "${VAR} reference (gitleaks global allowlist)",
        "AWS_SECRET_ACCESS_KEY=${AWS_SECRET_ACCESS_KEY}")
    neg("aws_secret_access_key", "placeholder", "angle-bracket placeholder",
        "aws_secret_access_key = <your-secret-access-key>")

    # -- Slack -----------------------------------------------------------------
    family("slack", ["gitleaks:slack-bot-token", "gitleaks:slack-user-token", "gitleaks:slack-app-token",
                     "gitleaks:slack-config-access-token", "gitleaks:slack-config-refresh-token",
                     "gitleaks:slack-legacy-bot-token", "gitleaks:slack-legacy-workspace-token",
                     "gitleaks:slack-legacy-token", "gitleaks:slack-webhook-url", "detect-secrets:SlackDetector"],
           "xox[bpasr]- tokens, xoxe.xox[bp]-1- config tokens, xoxe-1- refresh tokens, xapp-1- app "
           "tokens; for a webhook URL the value is its secret last segment (T…/B… are ids)")
    for _ in range(2):
        pos("slack", "xoxb", f"xoxb-{g.s(DIGITS, 12)}-{g.s(DIGITS, 13)}-{g.mixed(ALNUM, 24)}")
    pos("slack", "xoxb-legacy", f"xoxb-{g.s(DIGITS, 11)}-{g.mixed(ALNUM, 24)}")
    for _ in range(2):
        pos("slack", "xoxp", f"xoxp-{g.s(DIGITS, 12)}-{g.s(DIGITS, 12)}-{g.s(DIGITS, 12)}-{g.mixed(HEX, 32)}")
    pos("slack", "xoxa", f"xoxa-2-{g.s(DIGITS, 9)}-{g.s(DIGITS, 11)}-{g.s(DIGITS, 13)}-{g.mixed(HEX, 18)}")
    pos("slack", "xoxr", f"xoxr-1-{g.mixed(ALNUM, 40)}")
    pos("slack", "xoxs", f"xoxs-{g.s(DIGITS, 12)}-{g.s(DIGITS, 12)}-{g.s(DIGITS, 12)}-{g.mixed(HEX, 10)}")
    pos("slack", "xoxe.xoxp", "xoxe.xoxp-1-" + g.mixed(ALNUM, 163))
    pos("slack", "xoxe.xoxb", "xoxe.xoxb-1-" + g.mixed(ALNUM, 165))
    pos("slack", "xoxe", "xoxe-1-" + g.mixed(ALNUM, 146))
    pos("slack", "xapp", f"xapp-1-A{g.s(UPPER_ALNUM, 10)}-{g.s(DIGITS, 13)}-{g.mixed(HEX, 64)}")
    for _ in range(2):
        seg = g.mixed(ALNUM, 24)
        pos("slack", "webhook", seg,
            f"https://hooks.slack.com/services/T{g.s(UPPER_ALNUM, 8)}/B{g.s(UPPER_ALNUM, 10)}/{seg}")
    v = f"xoxb-{g.s(DIGITS, 13)}-{g.s(DIGITS, 13)}-{g.mixed(ALNUM, 24)}"
    pos("slack", "xoxb", v, f"SLACK_BOT_TOKEN={v}")
    neg("slack", "lookalike", "repeated-x placeholder",
        "xoxb-" + "x" * 9 + "-" + "x" * 10 + "-" + "x" * 12)
    neg("slack", "placeholder", "word-only placeholder", "xoxb-your-bot-token")
    neg("slack", "lookalike", "digits only, too short", "xoxp-1234567890")
    neg("slack", "lookalike", "refresh prefix with a short body", "xoxe-1-xxx")
    neg("slack", "ours", "xoxo in a URL path (gitleaks slack-legacy-token false-positive shape)",
        "https://blog.example.org/2024/05/hugs-and-xoxo-indieweb-1.jpg")
    neg("slack", "lookalike", "XOXO inside an image name", "KPOP-XOXO-teaser-exo-k-3452109-720-516.jpg")
    neg("slack", "placeholder", "Slack documentation's placeholder webhook",
        "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX")
    neg("slack", "ours", "xoxo in prose", "hugs and xoxo, Anna")

    # -- Telegram ----------------------------------------------------------------
    family("telegram", ["gitleaks:telegram-bot-api-token", "detect-secrets:TelegramBotTokenDetector"],
           "<8-10 digit bot id>:AA + 33 [A-Za-z0-9_-]")

    def tg(nd: int) -> str:
        return str(g.num(1, 9)) + g.s(DIGITS, nd - 1) + ":AA" + g.mixed(B64URL, 33)

    for nd in (8, 9, 10):
        pos("telegram", f"bot-id-{nd}", tg(nd))
    v = tg(10)
    pos("telegram", "bot-id-10", v, f"TELEGRAM_BOT_TOKEN={v}")
    v = tg(9)
    pos("telegram", "bot-id-9", v, f"https://api.telegram.org/bot{v}/getMe")
    neg("telegram", "lookalike", "bot id of 4 digits (below the rule sets' minimum)",
        g.s(DIGITS, 4) + ":AA" + g.mixed(B64URL, 33))
    neg("telegram", "ours", "date:ticker note, words after :AA",
        "20240517:AAPL-quarterly-earnings-call-recaps")
    neg("telegram", "ours", "clock time", "meet at 12:30:45 tomorrow")

    # -- Discord bot token --------------------------------------------------------
    family("discord", ["detect-secrets:DiscordBotTokenDetector"],
           "base64(user id) . 6 . 27 or 38 [A-Za-z0-9_-]; gitleaks' discord rules are keyword-bound "
           "(hex/numeric secrets next to 'discord'), not this shape")

    def snowflake_b64() -> str:
        return b64url_nopad(str(g.num(10**17, 10**19 - 1)).encode())

    for third in (27, 38, 38):
        pos("discord", f"bot-{third}", f"{snowflake_b64()}.{g.mixed(B64URL, 6)}.{g.mixed(B64URL, third)}")
    v = f"{snowflake_b64()}.{g.mixed(B64URL, 6)}.{g.mixed(B64URL, 38)}"
    pos("discord", "bot-38", v, f"Authorization: Bot {v}")
    neg("discord", "ours", "dotted Java-style identifier of the same segment lengths",
        "NetworkConnectionManager.handle.onConnectionStateChangedEvent")
    neg("discord", "ours", "a Discord user id (public) without the other segments",
        "user " + snowflake_b64())

    # -- Google API key ------------------------------------------------------------
    family("google_api_key", ["gitleaks:gcp-api-key"], "AIza + 35 [A-Za-z0-9_-] (in practice AIzaSy…)")
    for _ in range(3):
        pos("google_api_key", "AIzaSy", "AIzaSy" + g.mixed(B64URL, 33))
    v = "AIzaSy" + g.mixed(B64URL, 33)
    pos("google_api_key", "AIzaSy", v, f"https://maps.googleapis.com/maps/api/geocode/json?address=Berlin&key={v}")
    v = "AIzaSy" + g.mixed(B64URL, 33)
    pos("google_api_key", "AIzaSy", v, f"GOOGLE_API_KEY={v}")
    neg("google_api_key", "lookalike", "low entropy (gitleaks false-positive shape)", "AIza" + "a" * 35)
    neg("google_api_key", "placeholder", "repeated-X placeholder", "AIzaSy" + "X" * 33)
    neg("google_api_key", "lookalike", "wrong case", "AIZASY" + g.mixed(UPPER_ALNUM, 33))
    neg("google_api_key", "lookalike", "AIza inside a longer base64 run (no boundary)",
        g.mixed(ALNUM, 30) + "AIza" + g.mixed(ALNUM, 35) + g.mixed(ALNUM, 12))
    neg("google_api_key", "placeholder", "angle-bracket placeholder", "key=<YOUR_GOOGLE_API_KEY>")

    # -- PEM / PGP private keys ----------------------------------------------------
    family("private_key", ["gitleaks:private-key", "detect-secrets:PrivateKeyDetector"],
           "value = the base64 body (its line breaks included), not the armor lines")

    def pem(label: str, der: bytes, width: int = 64, nl: str = "\n") -> tuple[str, str]:
        body = wrap(base64.b64encode(der).decode(), width, nl)
        return body, f"-----BEGIN {label}-----{nl}{body}{nl}-----END {label}-----"

    def seq(content: bytes) -> bytes:
        return b"\x30" + der_len(len(content)) + content

    rsa2048 = seq(b"\x02\x01\x00\x02\x82\x01\x01\x00" + g.b(1180))
    body, text = pem("RSA PRIVATE KEY", rsa2048)
    pos("private_key", "rsa", body, text)
    rsa1024 = seq(b"\x02\x01\x00\x02\x81\x81\x00" + g.b(598))
    body, text = pem("RSA PRIVATE KEY", rsa1024, nl="\r\n")
    pos("private_key", "rsa-crlf", body, text)
    ec = seq(b"\x02\x01\x01\x04\x20" + g.b(32) + b"\xa0\x0a\x06\x08\x2a\x86\x48\xce\x3d\x03\x01\x07"
             + b"\xa1\x44\x03\x42\x00\x04" + g.b(64))
    body, text = pem("EC PRIVATE KEY", ec)
    pos("private_key", "ec", body, text)
    pkcs8 = seq(b"\x02\x01\x00\x30\x0d\x06\x09\x2a\x86\x48\x86\xf7\x0d\x01\x01\x01\x05\x00"
                + b"\x04\x82\x04\xa8" + seq(b"\x02\x01\x00\x02\x82\x01\x01\x00" + g.b(1176)))
    body, text = pem("PRIVATE KEY", pkcs8)
    pos("private_key", "pkcs8", body, text)
    enc = seq(b"\x30\x58\x06\x09\x2a\x86\x48\x86\xf7\x0d\x01\x05\x0d" + g.b(1250))
    body, text = pem("ENCRYPTED PRIVATE KEY", enc)
    pos("private_key", "pkcs8-encrypted", body, text)
    pub = g.b(32)

    def sshstr(b: bytes) -> bytes:
        return len(b).to_bytes(4, "big") + b

    ed_pub = sshstr(b"ssh-ed25519") + sshstr(pub)
    check = g.b(4)
    priv = (check + check + ed_pub[:-36] + sshstr(pub) + sshstr(g.b(32) + pub)
            + sshstr(b"deploy@build-07") + b"\x01\x02\x03\x04\x05")
    openssh = (b"openssh-key-v1\x00" + sshstr(b"none") + sshstr(b"none") + sshstr(b"")
               + (1).to_bytes(4, "big") + sshstr(ed_pub) + sshstr(priv))
    body, text = pem("OPENSSH PRIVATE KEY", openssh, width=70)
    pos("private_key", "openssh", body, text)
    dsa = seq(b"\x02\x01\x00\x02\x81\x81\x00" + g.b(430))
    body, text = pem("DSA PRIVATE KEY", dsa)
    pos("private_key", "dsa", body, text)
    pgp = b"\xc5\x58\x04" + g.b(4) + b"\x16\x09\x2b\x06\x01\x04\x01\xda\x47\x0f\x01" + g.b(250)
    body = wrap(base64.b64encode(pgp).decode(), 64)
    crc = base64.b64encode(crc24(pgp).to_bytes(3, "big")).decode()
    pos("private_key", "pgp", body,
        f"-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{body}\n={crc}\n-----END PGP PRIVATE KEY BLOCK-----")
    # negatives: a certificate (ECDSA P-384 shapes), an Ed25519 public key, a PGP public key block
    cert = seq(seq(b"\xa0\x03\x02\x01\x02\x02\x14" + g.b(20)
                   + b"\x30\x0a\x06\x08\x2a\x86\x48\xce\x3d\x04\x03\x03" + g.b(300))
               + b"\x30\x0a\x06\x08\x2a\x86\x48\xce\x3d\x04\x03\x03" + b"\x03\x69\x00" + g.b(104))
    _, text = pem("CERTIFICATE", cert)
    neg("private_key", "ours", "a certificate is public", text)
    spki = b"\x30\x2a\x30\x05\x06\x03\x2b\x65\x70\x03\x21\x00" + g.b(32)
    _, text = pem("PUBLIC KEY", spki)
    neg("private_key", "ours", "a public key is public", text)
    pgp_pub = b"\x99\x01\x0d\x04" + g.b(4) + b"\x01\x08\x00" + g.b(256) + b"\x00\x11\x01\x00\x01"
    body = wrap(base64.b64encode(pgp_pub).decode(), 64)
    crc = base64.b64encode(crc24(pgp_pub).to_bytes(3, "big")).decode()
    neg("private_key", "lookalike", "a PGP public key block is public (a gitleaks false-positive shape)",
        f"-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n{body}\n={crc}\n-----END PGP PUBLIC KEY BLOCK-----")
    rsa_pub = b"\x00\x00\x00\x07ssh-rsa\x00\x00\x00\x03\x01\x00\x01\x00\x00\x01\x81\x00" + g.b(384)
    neg("private_key", "ours", "an OpenSSH public key line",
        "ssh-rsa " + base64.b64encode(rsa_pub).decode() + " ops@bastion")
    neg("private_key", "ours", "the armor line named in prose, no key material "
        "(gitleaks needs 64+ characters between the armor lines)",
        "SSH keys begin with -----BEGIN OPENSSH PRIVATE KEY----- and must never be pasted here")
    neg("private_key", "placeholder", "elided body",
        "-----BEGIN RSA PRIVATE KEY-----\n...\n-----END RSA PRIVATE KEY-----")

    # -- JWT -----------------------------------------------------------------------
    family("jwt", ["gitleaks:jwt", "detect-secrets:JwtTokenDetector"],
           "value = the whole token; unsigned (alg none) tokens end with an empty signature")

    def jwt(alg: str, sig_bytes: int) -> str:
        head = b64url_nopad(json.dumps({"alg": alg, "typ": "JWT"}, separators=(",", ":")).encode())
        claims = {"sub": g.mixed(LOWER_ALNUM, 12), "iat": g.num(1_700_000_000, 1_790_000_000),
                  "scope": g.pick(["read", "read write", "admin", "repo:deploy"]),
                  "jti": g.mixed(HEX, 16)}
        body = b64url_nopad(json.dumps(claims, separators=(",", ":")).encode())
        sig = b64url_nopad(g.b(sig_bytes)) if sig_bytes else ""
        return f"{head}.{body}.{sig}"

    pos("jwt", "HS256", jwt("HS256", 32))
    pos("jwt", "HS256", jwt("HS256", 32))
    pos("jwt", "RS256", jwt("RS256", 256))
    pos("jwt", "ES256", jwt("ES256", 64))
    pos("jwt", "none", jwt("none", 0))
    v = jwt("none", 0)
    pos("jwt", "none", v, f"token={v}")
    v = jwt("HS256", 32)
    pos("jwt", "HS256", v, f"Cookie: session={v}")
    neg("jwt", "ours", "any base64 JSON object starts with eyJ",
        b64url_nopad(json.dumps({"theme": "dark", "lang": "en-US"}).encode()))
    neg("jwt", "ours", "a JOSE header alone", b64url_nopad(b'{"typ":"JWT"}'))
    neg("jwt", "placeholder", "the jwt.io documentation's structure placeholder", "xxxxx.yyyyy.zzzzz")

    # -- Authorization headers ------------------------------------------------------
    family("bearer_header", ["gitleaks:curl-auth-header"],
           "an opaque token after Authorization: Bearer; value = the token")
    for text_form, tok in (
        ("Authorization: Bearer {}", g.mixed(ALNUM + "._~+/-", 40)),
        ("Authorization: Bearer {}", g.mixed(HEX, 64)),
        ("authorization: bearer {}", g.mixed(B64URL, 43)),
        ("curl -H 'Authorization: Bearer {}' https://api.example.net/v1/me", g.mixed(ALNUM, 32)),
        ('{{"Authorization": "Bearer {}"}}', g.mixed(ALNUM + "._-", 48)),
        ("Authorization: Bearer {}", g.s(LETTERS, 32)),
    ):
        pos("bearer_header", "bearer", tok, text_form.format(tok))
    family("basic_header", ["gitleaks:curl-auth-header"],
           "Authorization: Basic base64(user:password); value = the base64")
    for user, form in (("deploy", "Authorization: Basic {}"), ("svc-backup", "Authorization: Basic {}"),
                       ("admin", "curl -H \"Authorization: Basic {}\" https://registry.example.net/v2/")):
        v = base64.b64encode(f"{user}:{g.password(18)}".encode()).decode()
        pos("basic_header", "basic", v, form.format(v))
    family("token_header", ["gitleaks:curl-auth-header"],
           "Authorization: Token / Api-Token, X-API-Key: headers; value = the token")
    for form, tok in (("Authorization: Token {}", g.mixed(HEX, 40)),
                      ("Authorization: Token {}", g.mixed(ALNUM, 40)),
                      ("Authorization: Api-Token {}", g.mixed(B64URL, 36)),
                      ("X-API-Key: {}", g.mixed(ALNUM, 32))):
        pos("token_header", "token", tok, form.format(tok))
    neg("bearer_header", "ours", "the word bearer in prose", "bearer of bad news")
    neg("bearer_header", "ours", "the words bearer token in prose", "the bearer token is missing")
    neg("bearer_header", "placeholder", "angle-bracket placeholder", "Authorization: Bearer <token>")
    neg("bearer_header", "placeholder", "${VAR} reference", "Authorization: Bearer ${API_TOKEN}")
    neg("bearer_header", "placeholder", "$VAR reference", "Authorization: Bearer $API_KEY")
    neg("bearer_header", "placeholder", "repeated-X placeholder (a gitleaks false-positive shape)",
        "Authorization: Bearer XXXXXXXXXXXX")
    neg("bearer_header", "placeholder", "command substitution",
        "Authorization: Bearer $(gcloud auth print-access-token)")
    neg("bearer_header", "ours", "Bearer and a short token", "Bearer abc123")
    neg("bearer_header", "ours", "Bearer and a word", "Bearer token")
    neg("bearer_header", "ours", "Bearer and a word", "Bearer undefined")
    neg("bearer_header", "ours", "a challenge header names the scheme", 'WWW-Authenticate: Bearer realm="example"')
    neg("basic_header", "placeholder", "elided credentials (a gitleaks false-positive shape)",
        "Authorization: Basic ...")
    neg("basic_header", "placeholder", "angle-bracket placeholder", "Authorization: Basic <base64(user:password)>")
    neg("basic_header", "ours", "a challenge header names the scheme", 'WWW-Authenticate: Basic realm="Restricted"')
    neg("basic_header", "ours", "basic auth in prose", "basic auth is enabled on the staging proxy")
    neg("token_header", "placeholder", "masked token (a gitleaks false-positive shape)",
        "Authorization: Token **********")
    neg("token_header", "placeholder", "angle-bracket placeholder", "Authorization: Token <your-token>")

    # -- curl -u -------------------------------------------------------------------
    family("curl_user", ["gitleaks:curl-auth-user"], "curl -u / --user user:password; value = the password")
    for form, user in (("curl -u {}:{} https://api.example.net/v1/ping", "elastic"),
                       ("curl --user '{}:{}' https://api.example.net/v1/ping", "ops"),
                       ('curl -s -u "{}:{}" https://registry.example.net/v2/_catalog', "ci-bot")):
        p = g.password(16)
        pos("curl_user", "user:password", p, form.format(user, p))
    neg("curl_user", "placeholder", "test:test (gitleaks allowlist: common placeholder passwords)",
        "curl -i -u 'test:test' https://localhost:9200")
    neg("curl_user", "placeholder", "user:token placeholder (gitleaks allowlist)", "curl -u username:token https://api.example.net")
    neg("curl_user", "placeholder", "user:pass placeholder (gitleaks allowlist)", "curl --user user:pass http://127.0.0.1:5000/file")
    neg("curl_user", "placeholder", "changeme (gitleaks allowlist)", "curl -u admin:changeme http://localhost:8080")
    neg("curl_user", "placeholder", "${VAR} references (gitleaks allowlist)", 'curl -u "${USER}:${PASS}" https://api.example.net')
    neg("curl_user", "placeholder", "<placeholder> (gitleaks allowlist)", "curl -u <user:password> https://test.example.com/")
    neg("curl_user", "placeholder", "[placeholder] (gitleaks allowlist)", "curl --user admin:[PASSWORD] http://[IP]:7474/db/")
    neg("curl_user", "lookalike", "no password", 'curl -u "myusername" http://localhost:15130/api/check_user/')
    neg("curl_user", "lookalike", "empty user and password", 'curl -u ":" https://localhost:9200')
    neg("curl_user", "placeholder", "command substitution (gitleaks allowlist)",
        'curl --user "$(cat login.txt):$(cat password.txt)" https://api.example.net')

    # -- Stripe ------------------------------------------------------------------
    family("stripe", ["gitleaks:stripe-access-token", "detect-secrets:StripeDetector"],
           "sk_/rk_ + live_/test_ + 24..99 alnum (test-mode secret keys are still secrets)")
    pos("stripe", "sk_live", "sk_live_" + g.mixed(ALNUM, 24))
    pos("stripe", "sk_live", "sk_live_51" + g.mixed(ALNUM, 97))
    pos("stripe", "rk_live", "rk_live_51" + g.mixed(ALNUM, 97))
    pos("stripe", "sk_test", "sk_test_51" + g.mixed(ALNUM, 97))
    v = "sk_live_" + g.mixed(ALNUM, 24)
    pos("stripe", "sk_live", v, f"STRIPE_SECRET_KEY={v}")
    neg("stripe", "placeholder", "Stripe API documentation's published test key", "sk_test_4eC39HqLyjWDarjtT1zdp7dc")
    neg("stripe", "placeholder", "Stripe API documentation's published publishable key", "pk_test_TYooMQauvdEDq54NiTphI7jx")
    neg("stripe", "lookalike", "a publishable key is public by design", "pk_live_" + g.mixed(ALNUM, 24))
    neg("stripe", "lookalike", "task_test_ (a gitleaks false-positive shape)", "task_test_" + g.mixed(ALNUM, 30))
    neg("stripe", "placeholder", "repeated-x placeholder", "sk_live_" + "x" * 24)

    # -- Twilio ----------------------------------------------------------------------
    family("twilio", ["gitleaks:twilio-api-key", "detect-secrets:TwilioKeyDetector"], "SK + 32 hex")
    for _ in range(2):
        pos("twilio", "SK", "SK" + g.mixed(HEX, 32))
    v = "SK" + g.mixed(HEX, 32)
    pos("twilio", "SK", v, f"TWILIO_API_KEY={v}")
    neg("twilio", "placeholder", "Twilio documentation's placeholder key SID", "SK" + "X" * 32)
    neg("twilio", "placeholder", "Twilio documentation's placeholder account SID", "AC" + "X" * 32)
    neg("twilio", "lookalike", "SK + 32 hex inside a word (no boundary)", "TASK" + g.mixed(HEX, 32))

    # -- SendGrid / npm / PyPI / Hugging Face --------------------------------------------
    family("sendgrid", ["gitleaks:sendgrid-api-token", "detect-secrets:SendGridDetector"], "SG. + 22 . 43")
    for _ in range(2):
        pos("sendgrid", "SG", f"SG.{g.mixed(B64URL, 22)}.{g.mixed(B64URL, 43)}")
    v = f"SG.{g.mixed(B64URL, 22)}.{g.mixed(B64URL, 43)}"
    pos("sendgrid", "SG", v, f"SENDGRID_API_KEY={v}")
    neg("sendgrid", "placeholder", "repeated-x placeholder", "SG." + "x" * 22 + "." + "x" * 43)
    neg("sendgrid", "placeholder", "angle-bracket placeholder", "SG.<your-api-key>")
    family("npm", ["gitleaks:npm-access-token", "detect-secrets:NpmDetector"], "npm_ + 36 alnum")
    for _ in range(2):
        pos("npm", "npm_", "npm_" + g.mixed(ALNUM, 36))
    v = "npm_" + g.mixed(ALNUM, 36)
    pos("npm", "npmrc", v, f"//registry.npmjs.org/:_authToken={v}")
    neg("npm", "ours", "npm's environment variable names", "npm_config_registry=https://registry.npmjs.org/")
    neg("npm", "ours", "npm's environment variable names", "npm_package_version npm_lifecycle_event")
    family("pypi", ["gitleaks:pypi-upload-token", "detect-secrets:PypiTokenDetector"],
           "pypi-AgEIcHlwaS5vcmc + 50..1000 [A-Za-z0-9_-] (a macaroon)")
    for _ in range(2):
        pos("pypi", "pypi-AgEI", "pypi-AgEIcHlwaS5vcmc" + g.mixed(B64URL, 160))
    v = "pypi-AgEIcHlwaS5vcmc" + g.mixed(B64URL, 160)
    pos("pypi", "pypirc", v, f"[pypi]\nusername = __token__\npassword = {v}")
    neg("pypi", "ours", "pypi- in a name", "pypi-simple-index-mirror")
    neg("pypi", "placeholder", "angle-bracket placeholder", "pypi-<token>")
    neg("pypi", "ours", "the .pypirc username of every token", "username = __token__")
    family("huggingface", ["gitleaks:huggingface-access-token", "gitleaks:huggingface-organization-api-token"],
           "hf_ + 34 letters; api_org_ + 34 letters")
    for _ in range(2):
        pos("huggingface", "hf_", "hf_" + g.s(LETTERS, 34))
    v = "hf_" + g.s(LETTERS, 34)
    pos("huggingface", "hf_", v, f"huggingface-cli login --token {v}")
    v = "api_org_" + g.s(LETTERS, 34)
    pos("huggingface", "api_org_", v)
    neg("huggingface", "ours", "library function name", "hf_hub_download")
    neg("huggingface", "placeholder", "repeated-x placeholder", "hf_" + "x" * 34)
    neg("huggingface", "lookalike", "hf_ inside an identifier (no boundary)",
        "kHMSymbolhf_generatedByHomeAppForDebuggingKey")
    neg("huggingface", "ours", "the variable name", 'os.environ.get("HF_TOKEN")')
    neg("huggingface", "placeholder", "repeated-X placeholder", "api_org_" + "X" * 34)

    # -- database URLs ------------------------------------------------------------------
    family("db_url", ["detect-secrets:BasicAuthDetector"],
           "scheme://user:PASSWORD@host; value = the password as written (percent-encoding kept)")
    for scheme, user, host in (("postgres", "app", "db.internal:5432/orders"),
                               ("postgresql", "analytics", "10.0.3.7:5432/warehouse"),
                               ("mysql", "root", "mysql.internal:3306/shop"),
                               ("mongodb", "admin", "mongo-0.internal:27017/admin?authSource=admin"),
                               ("mongodb+srv", "svc", "cluster0.ab1cd.mongodb.net/prod"),
                               ("redis", "", "cache.internal:6379/0"),
                               ("amqp", "worker", "mq.internal:5672/%2F")):
        p = g.mixed(ALNUM + "-_.~", g.num(16, 24))
        pos("db_url", scheme, p, f"{scheme}://{user}:{p}@{host}")
    p = g.mixed(ALNUM, 8) + "%40" + g.mixed(ALNUM, 8)
    pos("db_url", "postgres-percent", p, f"postgres://billing:{p}@db.internal:5432/billing")
    p = g.mixed(ALNUM, 20)
    pos("db_url", "env", p, f"DATABASE_URL=postgresql://app:{p}@db:5432/app")
    neg("db_url", "placeholder", "placeholder password", "postgres://user:password@localhost:5432/app")
    neg("db_url", "placeholder", "placeholder password", "mysql://root:changeme@127.0.0.1/test")
    neg("db_url", "placeholder", "${VAR} reference", "postgres://app:${DB_PASSWORD}@db:5432/orders")
    neg("db_url", "placeholder", "angle-bracket placeholder", "redis://:<password>@cache:6379/0")
    neg("db_url", "placeholder", "masked password", "postgres://app:****@db/app")
    neg("db_url", "placeholder", "RabbitMQ's documented default account", "amqp://guest:guest@localhost:5672/")
    neg("db_url", "lookalike", "no credentials", "mongodb://db1.example.net:27017,db2.example.net:27017/app?replicaSet=rs0")
    neg("db_url", "lookalike", "user without password", "postgres://app@db:5432/orders")
    neg("db_url", "ours", "scp-style git remote", "git@github.com:acme/infra.git")
    neg("db_url", "ours", "ssh URL with a user", "ssh://git@example.com:2222/repo.git")

    # -- .env assignments with opaque values ----------------------------------------------
    family("env_secret", ["gitleaks:generic-api-key", "detect-secrets:KeywordDetector"],
           "KEY=value lines whose name says key/token/secret/password and whose value has no known "
           "prefix; claimable only by the name")
    for name, val in (("DJANGO_SECRET_KEY", g.mixed(ALNUM + "!@#%^&*(-_=+)", 50)),
                      ("SESSION_SECRET", g.mixed(HEX, 64)),
                      ("INTERNAL_API_KEY", g.mixed(ALNUM, 32)),
                      ("WEBHOOK_TOKEN", g.mixed(B64URL, 40)),
                      ("ADMIN_PASSWORD", g.password(16)),
                      ("SMTP_PASSWORD", g.password(20)),
                      ("ENCRYPTION_KEY", base64.b64encode(g.b(32)).decode()),
                      ("PASSWORD", g.password(14))):
        pos("env_secret", name, val, f"{name}={val}")
    v = g.mixed(ALNUM, 40)
    pos("env_secret", "JWT_SECRET", v, f'export JWT_SECRET="{v}"')
    v = g.password(18)
    pos("env_secret", "db_password", v, f"db_password: '{v}'")
    neg("env_secret", "lookalike", "empty value", "API_KEY=")
    neg("env_secret", "placeholder", "${VAR} reference (gitleaks global allowlist)", "API_KEY=${API_KEY}")
    neg("env_secret", "placeholder", "placeholder value", "SECRET_KEY=changeme")
    neg("env_secret", "placeholder", "placeholder value", "PASSWORD=password")
    neg("env_secret", "placeholder", "angle-bracket placeholder", "PASSWORD=<password>")
    neg("env_secret", "lookalike", "a token URL (gitleaks allowlist: token_url)", "TOKEN_URL=https://auth.example.com/oauth/token")
    neg("env_secret", "lookalike", "a key length (gitleaks allowlist: key_length)", "KEY_LENGTH=32")
    neg("env_secret", "lookalike", "a path (gitleaks global allowlist: /etc/...)", "PUBLIC_KEY_PATH=/etc/ssl/certs/app.pem")
    neg("env_secret", "lookalike", "a secret's name (gitleaks allowlist: secret_name)", "SECRET_NAME=prod-app-secret")
    neg("env_secret", "lookalike", "a duration", "ACCESS_TOKEN_TTL=3600")
    neg("env_secret", "lookalike", "an API version (gitleaks allowlist: api_version)", "API_VERSION=2024-06-01")
    neg("env_secret", "lookalike", "a length", "PASSWORD_MIN_LENGTH=12")
    neg("env_secret", "lookalike", "a header name (gitleaks allowlist: csrf_token)", "CSRF_TOKEN_HEADER=X-CSRF-Token")
    neg("env_secret", "placeholder", "boolean (gitleaks global allowlist)", "AUTH_ENABLED=true")
    neg("env_secret", "placeholder", "null (gitleaks global allowlist)", "api_key: null")

    # -- distinctive-prefix families (gitleaks), one or two positives each ---------------------
    def simple(fam: str, rules: list[str], note: str, shapes: list[tuple[str, str]],
               negs: list[tuple[str, str, str]] = ()) -> None:
        family(fam, [f"gitleaks:{r}" for r in rules], note)
        for shape, value in shapes:
            pos(fam, shape, value)
        for kind, why, text in negs:
            neg(fam, kind, why, text)

    simple("shopify", ["shopify-access-token", "shopify-shared-secret", "shopify-custom-access-token",
                       "shopify-private-app-access-token"], "shp(at|ss|ca|pa)_ + 32 hex",
           [("shpat", "shpat_" + g.mixed(HEX, 32)), ("shpss", "shpss_" + g.mixed(HEX, 32)),
            ("shpca", "shpca_" + g.mixed(HEX, 32)), ("shppa", "shppa_" + g.mixed(HEX, 32))],
           [("placeholder", "repeated-x placeholder", "shpat_" + "x" * 32)])
    simple("digitalocean", ["digitalocean-pat", "digitalocean-access-token", "digitalocean-refresh-token"],
           "do[por]_v1_ + 64 hex",
           [("dop_v1", "dop_v1_" + g.mixed(HEX, 64)), ("doo_v1", "doo_v1_" + g.mixed(HEX, 64)),
            ("dor_v1", "dor_v1_" + g.mixed(HEX, 64))],
           [("placeholder", "angle-bracket placeholder", "dop_v1_<your-token>")])
    simple("linear", ["linear-api-key"], "lin_api_ + 40 alnum",
           [("lin_api", "lin_api_" + g.mixed(ALNUM, 40)), ("lin_api", "lin_api_" + g.mixed(ALNUM, 40))])
    simple("postman", ["postman-api-token"], "PMAK- + 24 hex - 34 hex",
           [("PMAK", f"PMAK-{g.mixed(HEX, 24)}-{g.mixed(HEX, 34)}"),
            ("PMAK", f"PMAK-{g.mixed(HEX, 24)}-{g.mixed(HEX, 34)}")])
    glc_json = b64url_nopad(json.dumps({"o": str(g.num(100000, 999999)), "n": "stack-" + g.mixed(LOWER_ALNUM, 8) + "-write",
                                        "k": g.mixed(ALNUM, 24), "m": {"r": "prod-eu-west-0"}}).encode())
    simple("grafana", ["grafana-cloud-api-token", "grafana-service-account-token", "grafana-api-key"],
           "glc_ + base64 JSON; glsa_ + 32 alnum _ 8 hex; eyJrIjoi + 70+ alnum (legacy API key)",
           [("glc", "glc_" + glc_json), ("glsa", f"glsa_{g.mixed(ALNUM, 32)}_{g.mixed(HEX, 8)}"),
            ("eyJrIjoi", "eyJrIjoi" + g.mixed(ALNUM, 72))],
           [("lookalike", "repeated-x placeholder (a gitleaks false-positive shape)", "glc_" + "x" * 40),
            ("lookalike", "repeated-X placeholder", "glsa_" + "X" * 32 + "_" + "A" * 8)])
    simple("newrelic", ["new-relic-user-api-key"], "NRAK- + 27 upper alnum",
           [("NRAK", "NRAK-" + g.mixed(UPPER_ALNUM, 27)), ("NRAK", "NRAK-" + g.mixed(UPPER_ALNUM, 27))])
    simple("databricks", ["databricks-api-token"], "dapi + 32 hex (optional -N)",
           [("dapi", "dapi" + g.mixed(HEX, 32)), ("dapi", "dapi" + g.mixed(HEX, 32) + "-2")],
           [("lookalike", "dapi + 32 characters that are not all hex (a gitleaks false-positive shape)",
             "the docs show dapi" + g.mixed(HEX, 28) + "wxyz as a sample")])
    simple("doppler", ["doppler-api-token"], "dp.pt. + 43 alnum",
           [("dp.pt", "dp.pt." + g.mixed(ALNUM, 43)), ("dp.pt", "dp.pt." + g.mixed(ALNUM, 43))])
    org = b64url_nopad(json.dumps({"iat": g.num(1_700_000_000, 1_790_000_000), "url": "https://sentry.io",
                                   "region_url": "https://us.sentry.io", "org": g.s(LOWER, 7)},
                                  separators=(",", ":")).encode())
    simple("sentry", ["sentry-user-token", "sentry-org-token"],
           "sntryu_ + 64 hex; sntrys_ + base64 JSON _ 43",
           [("sntryu", "sntryu_" + g.mixed(HEX, 64)), ("sntrys", f"sntrys_{org}_{g.mixed(ALNUM, 43)}")])
    simple("atlassian", ["atlassian-api-token"], "ATATT3 + 186 [A-Za-z0-9_=-]",
           [("ATATT3", "ATATT3" + g.mixed(B64URL, 177) + "=" + g.mixed(HEX.upper(), 8)),
            ("ATATT3", "ATATT3" + g.mixed(B64URL, 177) + "=" + g.mixed(HEX.upper(), 8))])
    simple("age", ["age-secret-key"], "AGE-SECRET-KEY-1 + 58 bech32",
           [("AGE-SECRET-KEY", "AGE-SECRET-KEY-1" + g.s(BECH32, 58))])
    simple("pulumi", ["pulumi-api-token"], "pul- + 40 hex", [("pul", "pul-" + g.mixed(HEX, 40))])
    simple("prefect", ["prefect-api-token"], "pnu_ + 36 alnum", [("pnu", "pnu_" + g.mixed(ALNUM, 36))])
    simple("rubygems", ["rubygems-api-token"], "rubygems_ + 48 hex",
           [("rubygems", "rubygems_" + g.mixed(HEX, 48))])
    simple("perplexity", ["perplexity-api-key"], "pplx- + 48 alnum",
           [("pplx", "pplx-" + g.mixed(ALNUM, 48))])
    simple("openshift", ["openshift-user-token"], "sha256~ + 43 [A-Za-z0-9_-]",
           [("sha256~", "sha256~" + g.mixed(B64URL, 43))])
    simple("planetscale", ["planetscale-api-token", "planetscale-password", "planetscale-oauth-token"], "pscale_tkn_ / pscale_pw_ + 32..64",
           [("pscale_tkn", "pscale_tkn_" + g.mixed(B64URL, 43)), ("pscale_pw", "pscale_pw_" + g.mixed(B64URL, 43))])
    simple("heroku", ["heroku-api-key-v2"], "HRKU-AA + 58 [A-Za-z0-9_-]",
           [("HRKU", "HRKU-AA" + g.mixed(B64URL, 58))])
    simple("dynatrace", ["dynatrace-api-token"], "dt0c01. + 24 . 64",
           [("dt0c01", f"dt0c01.{g.mixed(UPPER_ALNUM, 24)}.{g.mixed(UPPER_ALNUM, 64)}")])
    simple("duffel", ["duffel-api-token"], "duffel_(test|live)_ + 43",
           [("duffel_live", "duffel_live_" + g.mixed(B64URL, 43))])
    simple("infracost", ["infracost-api-token"], "ico- + 32 alnum", [("ico", "ico-" + g.mixed(ALNUM, 32))])
    simple("alibaba", ["alibaba-access-key-id"], "LTAI + 20 alnum", [("LTAI", "LTAI" + g.mixed(ALNUM, 20))])
    simple("hashicorp", ["hashicorp-tf-api-token"], "14 alnum .atlasv1. 60-70",
           [("atlasv1", f"{g.mixed(LOWER_ALNUM, 14)}.atlasv1.{g.mixed(B64URL, 67)}")])
    ops = b64url_nopad(json.dumps({"signInAddress": "acme.1password.com", "userAuth": {"method": "SRPg-4096",
                                   "alg": "PBES2g-HS256", "iterations": 650000, "salt": g.mixed(B64URL, 22)},
                                   "email": g.mixed(LOWER_ALNUM, 26) + "@1passwordserviceaccounts.com",
                                   "srpX": g.mixed(HEX, 64), "muk": {"alg": "A256GCM", "ext": True,
                                   "k": g.mixed(B64URL, 43), "key_ops": ["encrypt", "decrypt"], "kty": "oct",
                                   "kid": "mp"}, "secretKey": "A3-" + g.mixed(UPPER_ALNUM, 6)}).encode())
    simple("onepassword", ["1password-service-account-token"], "ops_eyJ + 250+ base64",
           [("ops_eyJ", "ops_" + ops)])
    simple("square", ["square-access-token"], "sq0atp- / EAAA + 22..60; sq0csp- + 43",
           [("sq0atp", "sq0atp-" + g.mixed(B64URL, 22)), ("sq0csp", "sq0csp-" + g.mixed(B64URL, 43)),
            ("EAAA", "EAAA" + g.mixed(B64URL, 60))])
    simple("shippo", ["shippo-api-token"], "shippo_(live|test)_ + 40 hex",
           [("shippo_live", "shippo_live_" + g.mixed(HEX, 40))])
    simple("sendinblue", ["sendinblue-api-token"], "xkeysib- + 64 hex - 16 alnum",
           [("xkeysib", f"xkeysib-{g.mixed(HEX, 64)}-{g.mixed(ALNUM, 16)}")])
    simple("artifactory", ["artifactory-api-key"], "AKCp + 69 alnum", [("AKCp", "AKCp" + g.mixed(ALNUM, 69))])
    simple("scalingo", ["scalingo-api-token"], "tk-us- + 48", [("tk-us", "tk-us-" + g.mixed(B64URL, 48))])
    simple("cloudflare", ["cloudflare-origin-ca-key"], "v1.0- + 24 hex - 146 hex",
           [("v1.0", f"v1.0-{g.mixed(HEX, 24)}-{g.mixed(HEX, 146)}")])
    simple("adobe", ["adobe-client-secret"], "p8e- + 32 alnum", [("p8e", "p8e-" + g.mixed(ALNUM, 32))])
    simple("flyio", ["flyio-access-token"], "fm2_ + 100+ base64", [("fm2", "fm2_" + g.mixed(B64, 120))])
    simple("readme", ["readme-api-token"], "rdme_ + 70 lower alnum", [("rdme", "rdme_" + g.mixed(LOWER_ALNUM, 70))])
    simple("easypost", ["easypost-api-token"], "EZAK + 54 alnum", [("EZAK", "EZAK" + g.mixed(ALNUM, 54))])
    simple("frameio", ["frameio-api-token"], "fio-u- + 64", [("fio-u", "fio-u-" + g.mixed(B64URL, 64))])
    simple("harness", ["harness-api-key"], "pat. 22 . 24 . 20",
           [("pat", f"pat.{g.mixed(B64URL, 22)}.{g.mixed(ALNUM, 24)}.{g.mixed(ALNUM, 20)}")])
    simple("clojars", ["clojars-api-token"], "CLOJARS_ + 60", [("CLOJARS", "CLOJARS_" + g.mixed(LOWER_ALNUM, 60))])
    simple("sourcegraph", ["sourcegraph-access-token"], "sgp_ + 16 hex _ 40 hex",
           [("sgp", f"sgp_{g.mixed(HEX, 16)}_{g.mixed(HEX, 40)}")])
    simple("flutterwave", ["flutterwave-secret-key", "flutterwave-encryption-key", "flutterwave-public-key"], "FLWSECK_TEST- + 32 [a-h0-9] -X",
           [("FLWSECK_TEST", f"FLWSECK_TEST-{g.mixed('abcdefgh0123456789', 32)}-X")])
    simple("octopus", ["octopus-deploy-api-key"], "API- + 26 upper alnum",
           [("API-", "API-" + g.mixed(UPPER_ALNUM, 26))])

    # -- hard families: no distinctive prefix ----------------------------------------------
    family("generic_hex", ["gitleaks:datadog-access-token", "gitleaks:mailchimp-api-key",
                           "gitleaks:sentry-access-token", "gitleaks:linear-client-secret", "gitleaks:heroku-api-key"],
           "hex or UUID secrets recognisable only by a vendor word nearby (semi-generic rules)", hard=True)
    v = g.mixed(HEX, 32)
    pos("generic_hex", "datadog", v, f"the datadog api key is {v}")
    v = g.mixed(HEX, 32) + "-us" + str(g.num(10, 21))
    pos("generic_hex", "mailchimp", v, f"MAILCHIMP_API_KEY={v}")
    v = g.mixed(HEX, 64)
    pos("generic_hex", "sentry-legacy", v, f"sentry auth token: {v}")
    v = g.mixed(HEX, 32)
    pos("generic_hex", "linear-client-secret", v, f"linear client secret {v}")
    h = g.mixed(HEX, 32)
    v = f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"
    pos("generic_hex", "heroku-uuid", v, f"HEROKU_API_KEY={v}")
    family("azure_storage_key", ["detect-secrets:AzureStorageKeyDetector"],
           "AccountKey=<88 base64> in a connection string; value = the key")
    for acct in ("acmeprodlogs", "mediauploads01"):
        v = base64.b64encode(g.b(64)).decode()
        pos("azure_storage_key", "AccountKey", v,
            f"DefaultEndpointsProtocol=https;AccountName={acct};AccountKey={v};EndpointSuffix=core.windows.net")
    neg("azure_storage_key", "placeholder",
        "the storage emulator's well-known account key, published in Microsoft's Azurite documentation",
        "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDX"
        "J1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;")
    neg("azure_storage_key", "placeholder", "angle-bracket placeholder",
        "DefaultEndpointsProtocol=https;AccountName=myaccount;AccountKey=<account-key>;EndpointSuffix=core.windows.net")
    family("azure_ad_client_secret", ["gitleaks:azure-ad-client-secret"],
           "3 chars + digit + Q~ + 31..34 [A-Za-z0-9_~.-]: Q~ after a digit is the shape's own mark")
    for _ in range(2):
        pos("azure_ad_client_secret", "Q~", g.mixed(ALNUM + "_~.", 3) + g.pick(DIGITS) + "Q~" + g.mixed(ALNUM + "_~.-", 34))
    neg("azure_ad_client_secret", "placeholder", "repeated-x placeholder", "client_secret=bP88Q~" + "x" * 34)

    # -- look-alikes from agent transcripts (ours) ---------------------------------------
    family("lookalike", [], "identifiers, hashes and words that agents print all day; none is a secret")
    neg("lookalike", "ours", "git commit SHA", "commit " + g.s(HEX, 40))
    neg("lookalike", "ours", "git commit SHA alone", g.s(HEX, 40))
    neg("lookalike", "ours", "SHA-256 hex", "sha256 " + g.s(HEX, 64))
    neg("lookalike", "ours", "container image digest", "ghcr.io/acme/api@sha256:" + g.s(HEX, 64))
    h = g.s(HEX, 32)
    neg("lookalike", "ours", "UUID", f"session {h[:8]}-{h[8:12]}-4{h[13:16]}-9{h[17:20]}-{h[20:]}")
    png = (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10\x00\x00\x00\x10\x08\x06\x00\x00\x00"
           + g.b(60) + b"\x00\x00\x00\x00IEND\xaeB`\x82")
    neg("lookalike", "ours", "base64 data-URI image", "data:image/png;base64," + base64.b64encode(png).decode())
    neg("lookalike", "ours", "npm lockfile integrity hash",
        "sha512-" + base64.b64encode(g.b(64)).decode())
    neg("lookalike", "ours", "Anthropic tool-use id", "toolu_01" + g.s(ALNUM, 22))
    neg("lookalike", "ours", "OpenAI tool-call id", "call_" + g.s(ALNUM, 24))
    neg("lookalike", "ours", "OpenAI completion id", "chatcmpl-" + g.s(ALNUM, 29))
    neg("lookalike", "ours", "Anthropic message id", "msg_01" + g.s(ALNUM, 22))
    neg("lookalike", "ours", "hyphenated long words", "a well-known-and-widely-deployed-mitigation-strategy")
    neg("lookalike", "ours", "hyphenated long words", "the end-to-end-encrypted-peer-to-peer-synchronisation-layer")
    neg("lookalike", "ours", "a long snake_case identifier", "get_user_authentication_token_from_session_store")
    neg("lookalike", "ours", "base64 of plain text", base64.b64encode(b"the quick brown fox jumps over the lazy dog").decode())


def png(g: Gen, width: int, height: int) -> bytes:
    """A real PNG (RGBA, zlib-compressed rows of a noisy gradient): the
    structure an encoded image has, with runs of zero bytes in its header."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    rows = bytearray()
    for y in range(height):
        rows.append(0)
        for x in range(width):
            rows += bytes([(x * 4) & 0xFF, (y * 4) & 0xFF, g.num(0, 255), 255])
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(bytes(rows), 9))
            + chunk(b"IEND", b""))


def build_more(g: Gen) -> None:  # noqa: PLR0915 (one long table on purpose)
    """The rule families of gitleaks' default configuration and
    detect-secrets' plugins the first corpus did not have, credentials in
    the configuration syntax tools print, and the texts of the agents' own
    instructions that a scanner must leave alone."""

    def simple(fam: str, sources: list[str], note: str, shapes: list[tuple[str, str]],
               negs: list[tuple[str, str, str]] = ()) -> None:
        family(fam, sources, note)
        for shape, value in shapes:
            pos(fam, shape, value)
        for kind, why, text in negs:
            neg(fam, kind, why, text)

    # -- distinctive prefixes of gitleaks rules not in the first corpus ----------------
    simple("onepassword_secret_key", ["gitleaks:1password-secret-key"],
           "A3- + 6 - 11 (or 6-5) - 5 - 5 - 5 upper alnum: the account's Secret Key",
           [("A3-", f"A3-{g.mixed(UPPER_ALNUM, 6)}-{g.mixed(UPPER_ALNUM, 11)}-{g.mixed(UPPER_ALNUM, 5)}"
                    f"-{g.mixed(UPPER_ALNUM, 5)}-{g.mixed(UPPER_ALNUM, 5)}")],
           [("lookalike", "an A3 paper size and a part number", "print on A3-PAPER in the LAB-ROOM-7")])
    simple("artifactory_reference", ["gitleaks:artifactory-reference-token"],
           "cmVmd (base64 of 'ref') + 59 alnum", [("cmVmd", "cmVmd" + g.mixed(ALNUM, 59))])
    simple("authress", ["gitleaks:authress-service-client-access-key"],
           "sc_/ext_/scauth_/authress_ + id . 4-6 . acc_ + id . 30-120 base64",
           [("sc_", f"sc_{g.mixed(LOWER_ALNUM, 20)}.{g.mixed(LOWER_ALNUM, 5)}.acc_{g.mixed(LOWER_ALNUM, 24)}"
                    f".{g.mixed(B64URL, 64)}")])
    simple("aws_bedrock", ["gitleaks:aws-amazon-bedrock-api-key-long-lived",
                           "gitleaks:aws-amazon-bedrock-api-key-short-lived"],
           "ABSK + 109..269 base64; bedrock-api-key- + base64 of bedrock.amazonaws.com + a signed query",
           [("ABSK", "ABSK" + base64.b64encode(g.b(120)).decode().rstrip("=")),
            ("bedrock-api-key", "bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t" + g.mixed(B64URL, 120))])
    simple("clickhouse", ["gitleaks:clickhouse-cloud-api-secret-key"], "4b1d + 38 alnum",
           [("4b1d", "4b1d" + g.mixed(ALNUM, 38))],
           [("lookalike", "4b1d inside a hex digest (a hash is lower-case hex)", "digest 4b1d" + g.s(HEX, 60))])
    simple("defined_networking", ["gitleaks:defined-networking-api-token"], "dnkey- + 26 - 52",
           [("dnkey", f"dnkey-{g.mixed(B64URL.upper() + DIGITS, 26)}-{g.mixed(ALNUM, 52)}")])
    simple("easypost_test", ["gitleaks:easypost-test-api-token"], "EZTK + 54 alnum",
           [("EZTK", "EZTK" + g.mixed(ALNUM, 54))])
    simple("facebook", ["gitleaks:facebook-page-access-token", "gitleaks:facebook-access-token",
                        "gitleaks:facebook-secret"],
           "EAAM/EAAC + 100+ alnum (page token); <15-16 digit app id>|<27-40> app access token "
           "beside 'facebook'; the app secret (32 hex) only under a secret-named key",
           [("EAAC", "EAAC" + g.mixed(ALNUM, 160)), ("EAAM", "EAAM" + g.mixed(ALNUM, 120))])
    v = g.s(DIGITS, 15) + "|" + g.mixed(B64URL, 32)
    pos("facebook", "app-token", v, f"facebook app access token {v}")
    v = g.mixed(HEX, 32)
    pos("facebook", "app-secret", v, f"FACEBOOK_APP_SECRET={v}")
    neg("facebook", "ours", "a markdown table row of numbers and words",
        "| 123456789012345 | total_sessions_of_the_month_per_user |")
    simple("flyio_macaroon", ["gitleaks:flyio-access-token"], "fm1a_/fm1r_ + 100+ base64",
           [("fm1a", "fm1a_" + g.mixed(B64, 140)), ("fm1r", "fm1r_" + g.mixed(B64, 140))])
    simple("harness_sat", ["gitleaks:harness-api-key"], "sat. 22 . 24 . 20 (service account token)",
           [("sat", f"sat.{g.mixed(B64URL, 22)}.{g.mixed(ALNUM, 24)}.{g.mixed(ALNUM, 20)}")])
    simple("intra42", ["gitleaks:intra42-client-secret"], "s-s4t2ud- / s-s4t2af- + 64 hex",
           [("s-s4t2ud", "s-s4t2ud-" + g.mixed(HEX, 64)), ("s-s4t2af", "s-s4t2af-" + g.mixed(HEX, 64))])
    simple("maxmind", ["gitleaks:maxmind-license-key"], "6 alnum _ 29 alnum _mmk",
           [("_mmk", f"{g.mixed(ALNUM, 6)}_{g.mixed(ALNUM, 29)}_mmk")])
    simple("newrelic_keys", ["gitleaks:new-relic-browser-api-token", "gitleaks:new-relic-insert-key"],
           "NRJS- + 19 hex; NRII- + 32", [("NRJS", "NRJS-" + g.mixed(HEX, 19)), ("NRII", "NRII-" + g.mixed(LOWER_ALNUM, 32))])
    h = g.mixed(HEX, 32)
    simple("plaid", ["gitleaks:plaid-api-token"], "access-(sandbox|development|production)-<uuid>",
           [("access-production", f"access-production-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}")],
           [("ours", "the environment named in prose", "use access-sandbox- tokens in tests")])
    simple("settlemint", ["gitleaks:settlemint-application-access-token", "gitleaks:settlemint-personal-access-token",
                          "gitleaks:settlemint-service-access-token"], "sm_aat_/sm_pat_/sm_sat_ + 16 alnum",
           [("sm_pat", "sm_pat_" + g.mixed(ALNUM, 16)), ("sm_aat", "sm_aat_" + g.mixed(ALNUM, 16))])
    simple("sonar", ["gitleaks:sonar-api-token"], "squ_/sqp_/sqa_ + 40 hex",
           [("squ", "squ_" + g.mixed(HEX, 40)), ("sqp", "sqp_" + g.mixed(HEX, 40))])
    simple("typeform", ["gitleaks:typeform-api-token"], "tfp_ + 59", [("tfp", "tfp_" + g.mixed(B64URL, 59))])
    simple("yandex", ["gitleaks:yandex-api-key"], "AQVN + 35..38", [("AQVN", "AQVN" + g.mixed(B64URL, 36))])
    simple("sidekiq", ["gitleaks:sidekiq-secret", "gitleaks:sidekiq-sensitive-url"],
           "BUNDLE_*__CONTRIBSYS__COM=8hex:8hex; https://8hex:8hex@gems.contribsys.com", [])
    v = g.mixed(HEX, 8) + ":" + g.mixed(HEX, 8)
    pos("sidekiq", "bundle", v, f"export BUNDLE_GEMS__CONTRIBSYS__COM={v}")
    u, p = g.mixed(HEX, 8), g.mixed(HEX, 8) + g.mixed(HEX, 4)
    pos("sidekiq", "url", p, f"source 'https://{u}:{p}@gems.contribsys.com/'")
    family("nuget", ["gitleaks:nuget-config-password"], "<add key=\"ClearTextPassword\" value=\"…\" />")
    v = g.password(16, "!#%*+-.=?^_~")
    pos("nuget", "ClearTextPassword", v, f'<add key="ClearTextPassword" value="{v}" />')
    neg("nuget", "ours", "a package source, not a password",
        '<add key="nuget.org" value="https://api.nuget.org/v3/index.json" />')
    simple("mapbox", ["gitleaks:mapbox-api-token"],
           "sk.eyJ… secret tokens; pk. public tokens are meant for the browser (not claimed, as Stripe's pk_)",
           [("sk.eyJ", "sk.eyJ1Ijoi" + g.mixed(B64URL, 50) + "." + g.mixed(B64URL, 22))],
           [("ours", "a public token is public by design", "pk.eyJ1IjoiYWNtZS1tYXBzIiwiYSI6ImNscHVibGljIn0.pub-lic-map-demo")])
    simple("dropbox", ["gitleaks:dropbox-short-lived-api-token", "gitleaks:dropbox-long-lived-api-token",
                       "gitleaks:dropbox-api-token"],
           "sl. + 130+ (short-lived); the long-lived and app keys only under a secret-named key",
           [("sl.", "sl.B" + g.mixed(B64URL, 138))],
           [("ours", "a file name with ssl. in it", "cat /etc/nginx/ssl.conf.d/options-ssl.conf")])
    simple("airtable", ["gitleaks:airtable-personnal-access-token", "gitleaks:airtable-api-key"],
           "pat + 14 alnum . 64 hex; the legacy key (key + 14) only under a secret-named key",
           [("pat", f"pat{g.mixed(ALNUM, 14)}.{g.mixed(HEX, 64)}")],
           [("ours", "a path in prose", "the path.to.module is compat.layer")])
    family("twitter", ["gitleaks:twitter-bearer-token", "gitleaks:twitter-api-key", "gitleaks:twitter-api-secret",
                       "gitleaks:twitter-access-token", "gitleaks:twitter-access-secret"],
           "the app-only bearer token: 22 A + 80..100 [A-Za-z0-9%]; the others only under a secret-named key")
    v = g.mixed(ALNUM + "%", 90)
    pos("twitter", "bearer", v, "A" * 22 + v)
    v = g.mixed(ALNUM, 50)
    pos("twitter", "api-secret", v, f"TWITTER_API_SECRET={v}")
    simple("teams_webhook", ["gitleaks:microsoft-teams-webhook"],
           "https://<tenant>.webhook.office.com/webhookb2/<uuid>@<uuid>/IncomingWebhook/<32>/<uuid>", [])
    hs = [g.mixed(HEX, 32) for _ in range(3)]
    uu = [f"{x[:8]}-{x[8:12]}-{x[12:16]}-{x[16:20]}-{x[20:]}" for x in hs]
    sec = g.mixed(LOWER_ALNUM, 32)
    pos("teams_webhook", "webhookb2", sec,
        f"https://acme.webhook.office.com/webhookb2/{uu[0]}@{uu[1]}/IncomingWebhook/{sec}/{uu[2]}")
    neg("teams_webhook", "ours", "the host named in prose", "Teams posts arrive from webhook.office.com")
    # -- shapes of rules the first corpus left to other families ------------------------
    family("jwt_base64", ["gitleaks:jwt-base64"], "a JWT itself base64-encoded: ZXlK…")
    tok = (b64url_nopad(b'{"alg":"HS256","typ":"JWT"}') + "." + b64url_nopad(json.dumps(
        {"sub": g.mixed(LOWER_ALNUM, 10), "iat": g.num(1_700_000_000, 1_790_000_000)}).encode()) + "."
        + b64url_nopad(g.b(32)))
    pos("jwt_base64", "ZXlK", base64.b64encode(tok.encode()).decode())
    neg("jwt_base64", "ours", "base64 of an ordinary sentence", base64.b64encode(b"eyes on the road, please").decode())
    family("kubernetes_secret", ["gitleaks:kubernetes-secret-yaml"],
           "the values of a Secret manifest's data: (base64) and stringData:")
    v = base64.b64encode(g.password(20).encode()).decode()
    pos("kubernetes_secret", "data", v,
        f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: db-credentials\ntype: Opaque\ndata:\n  password: {v}\n")
    v = g.password(18)
    pos("kubernetes_secret", "stringData", v,
        f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: api\nstringData:\n  api-credential: {v}\n")
    neg("kubernetes_secret", "ours", "a ConfigMap's data is not secret",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  log-level: debugVerbose2\n")
    for _ in range(2):
        pos("azure_ad_client_secret", "Q~",
            g.mixed(ALNUM, 3) + g.pick(DIGITS) + "Q~" + g.mixed(ALNUM + "_~.-", 34))
    family("twilio_account_sid", ["detect-secrets:TwilioKeyDetector"], "AC + 32 hex (the account SID)")
    pos("twilio_account_sid", "AC", "AC" + g.mixed(HEX, 32))
    neg("twilio_account_sid", "lookalike", "AC + 32 hex inside a word (no boundary)", "TRACE" + g.mixed(HEX, 32)[:30])
    family("artifactory_password", ["detect-secrets:ArtifactoryDetector"],
           "AKC + 10+ alnum (API key, claimed beside AKCp); AP + hex digit + 8+ (password)")
    pos("artifactory_password", "AP", "AP" + g.pick("0123456789ABCDEF") + g.mixed(ALNUM, 40))
    neg("artifactory_password", "ours", "upper-case words after AP", "APPROVED APPLICATIONS and APIs")
    family("ssh_private_key", ["detect-secrets:PrivateKeyDetector"],
           "SSH2 (RFC 4716) encrypted private keys and PuTTY .ppk private lines")
    body = wrap(base64.b64encode(g.b(600)).decode(), 70)
    pos("ssh_private_key", "ssh2", body,
        f"---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nComment: \"rsa-key-20260101\"\n{body}\n"
        f"---- END SSH2 ENCRYPTED PRIVATE KEY ----")
    pub = wrap(base64.b64encode(b"\x00\x00\x00\x07ssh-rsa" + g.b(200)).decode(), 64)
    priv = wrap(base64.b64encode(g.b(560)).decode(), 64)
    pos("ssh_private_key", "putty", priv,
        f"PuTTY-User-Key-File-2: ssh-rsa\nEncryption: none\nComment: rsa-key-20260101\n"
        f"Public-Lines: {len(pub.splitlines())}\n{pub}\nPrivate-Lines: {len(priv.splitlines())}\n{priv}\n"
        f"Private-MAC: {g.mixed(HEX, 40)}")

    # -- shapes of families above that their first positives left out -------------------------
    FAMILIES["square"]["sources"].append("detect-secrets:SquareOAuthDetector")
    pos("planetscale", "pscale_oauth", "pscale_oauth_" + g.mixed(B64URL, 43))
    pos("flutterwave", "FLWSECK_TEST-enc", "FLWSECK_TEST-" + g.mixed("abcdefgh0123456789", 12))
    pos("flutterwave", "FLWPUBK_TEST", f"FLWPUBK_TEST-{g.mixed('abcdefgh0123456789', 32)}-X")
    simple("notion", ["gitleaks:notion-api-token"], "ntn_ + 11 digits + 35 alnum",
           [("ntn", "ntn_" + g.s(DIGITS, 11) + g.mixed(ALNUM, 35))])
    simple("vault", ["gitleaks:vault-service-token", "gitleaks:vault-batch-token"],
           "hvs. + 90..120, hvb. + 138..300 (Vault 1.10+); the legacy s. + 24 is not claimed",
           [("hvs", "hvs." + g.mixed(B64URL, 95)), ("hvb", "hvb." + g.mixed(B64URL, 150))])
    v = g.mixed(HEX, 32) + "-us" + str(g.num(10, 21))
    simple("mailchimp", ["detect-secrets:MailchimpDetector", "gitleaks:mailchimp-api-key"],
           "32 hex + -us<data centre>", [("hex-us", v)])

    # -- a known vendor prefix + a high-entropy body of a length no rule names ---------
    family("vendor_prefix", [],
           "a known vendor prefix followed by a random body of a length or alphabet the vendor's own "
           "rule does not name (a format changed since the rules were written)")
    for pre, alpha, n in (("glpat-", B64URL, 16), ("npm_", ALNUM, 30), ("xai-", ALNUM, 32), ("pplx-", ALNUM, 32),
                          ("dop_v1_", HEX, 48), ("lin_api_", ALNUM, 32), ("gsk_", ALNUM, 30),
                          ("hf_", ALNUM, 30), ("tvly-", ALNUM, 16), ("sbp_", HEX, 30)):
        pos("vendor_prefix", pre.rstrip("-_"), pre + g.mixed(alpha, n))
    for kind, why, text in (
            ("ours", "an identifier after a vendor prefix", "hf_hub_download_to_local_cache"),
            ("ours", "a model name after a vendor prefix", "xai-grok-2-vision-1212"),
            ("ours", "a configuration key after a vendor prefix", "gsk_default_config_loader_v2"),
            ("ours", "an npm environment variable", "npm_config_cache_folder_v10"),
            ("ours", "a firmware file name", "fw_update_v2_candidate_build"),
            ("ours", "a model name", "pplx-embed-v1-0.6b")):
        neg("vendor_prefix", kind, why, text)

    # -- credentials in the configuration syntax tools print ---------------------------------
    family("kubeconfig", [], "a kubeconfig's client-key-data / client-certificate-data (base64 PEM) and token")
    key = base64.b64encode(("-----BEGIN EC PRIVATE KEY-----\n" + base64.b64encode(g.b(121)).decode()
                            + "\n-----END EC PRIVATE KEY-----\n").encode()).decode()
    crt = base64.b64encode(("-----BEGIN CERTIFICATE-----\n" + base64.b64encode(g.b(300)).decode()
                            + "\n-----END CERTIFICATE-----\n").encode()).decode()
    tok = g.mixed(LOWER_ALNUM, 6) + "." + g.mixed(LOWER_ALNUM, 16)
    pos("kubeconfig", "client-key-data", key,
        f"users:\n- name: admin\n  user:\n    client-certificate-data: {crt}\n    client-key-data: {key}\n",
        also=[crt])
    pos("kubeconfig", "token", tok, f"users:\n- name: ci\n  user:\n    token: {tok}\n")
    neg("kubeconfig", "ours", "the cluster's CA certificate is public; an empty token",
        "clusters:\n- cluster:\n    server: https://10.0.0.1:6443\n  name: prod\nusers:\n- name: ci\n  user:\n    token: \"\"\n")
    family("docker_auth", [], "a Docker config.json \"auth\": base64(user:password)")
    v = base64.b64encode(f"deploy:{g.password(20)}".encode()).decode()
    pos("docker_auth", "auths", v, f'{{"auths": {{"ghcr.io": {{"auth": "{v}"}}}}}}')
    neg("docker_auth", "ours", "a credential helper names no secret", '{"credsStore": "desktop", "auths": {"ghcr.io": {}}}')
    family("netrc", [], ".netrc: machine <host> login <user> password <password>")
    v = g.password(14, "!#%*+-.=?^_~")
    pos("netrc", "one-line", v, f"machine api.example.net login deploy password {v}")
    v = g.s(LOWER, 10)
    pos("netrc", "multi-line", v, f"machine git.example.org\n  login ci-bot\n  password {v}\n")
    neg("netrc", "ours", "the word password in prose beside machine",
        "the machine asks for a login password on every boot")
    family("mysql_cli", [], "mysql -p<password> (no space), --password=<password>, MYSQL_PWD=")
    v = g.password(14, "!#%*+-.=?^_~")
    pos("mysql_cli", "-p", v, f"mysql -h db.internal -u app -p{v} orders")
    v = g.password(12, "!#%*+-.=?^_~")
    pos("mysql_cli", "--password", v, f"mysqldump --user=root --password={v} shop > shop.sql")
    v = g.s(LOWER, 9)
    pos("mysql_cli", "MYSQL_PWD", v, f"MYSQL_PWD={v} mysql -u root")
    neg("mysql_cli", "ours", "-p with a space asks for the password; -P is the port",
        "mysql -h db.internal -P 3306 -u app -p orders")
    family("postgres_password", [], "PGPASSWORD=<password> before psql, a ~/.pgpass line host:port:db:user:password")
    v = g.s(LOWER, 8)
    pos("postgres_password", "PGPASSWORD", v, f"PGPASSWORD={v} psql -h db.internal -U app orders")
    v = g.password(16, "!#%*+-.=?^_~")
    pos("postgres_password", "pgpass", v, f"db.internal:5432:orders:app:{v}")
    v = g.s(LOWER_ALNUM, 12)
    pos("postgres_password", "pgpass-wildcard", v, f"*:*:*:replicator:{v}")
    neg("postgres_password", "ours", "a clock and a ratio", "at 12:30:45 the ratio was 1:2:3:4:5")
    neg("postgres_password", "ours", "an IPv6 address", "fe80::1ff:fe23:4567:890a")
    family("aws_credentials_file", [], "~/.aws/credentials: key id, secret key and session token of a profile")
    kid, sk, st = "ASIA" + g.s(AWS_BODY, 16), g.mixed(B64, 40), g.mixed(B64, 300)
    pos("aws_credentials_file", "session_token", st,
        f"[prod]\naws_access_key_id = {kid}\naws_secret_access_key = {sk}\naws_session_token = {st}\n",
        also=[kid, sk])
    family("npmrc", [], ".npmrc: //registry/:_authToken=<token> (any shape), _auth=<base64 user:password>")
    h = g.mixed(HEX, 32)
    v = f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
    pos("npmrc", "_authToken", v, f"//registry.npmjs.org/:_authToken={v}")
    v = base64.b64encode(f"ci:{g.password(16)}".encode()).decode()
    pos("npmrc", "_auth", v, f"registry=https://npm.example.net/\n_auth = {v}\nalways-auth = true")
    neg("npmrc", "placeholder", "an environment reference", "//registry.npmjs.org/:_authToken=${NPM_TOKEN}")
    family("pypirc", [], ".pypirc: password = <password> of a repository section")
    v = g.s(LOWER, 7) + g.s(DIGITS, 1) + g.s(LOWER, 4)
    pos("pypirc", "password", v,
        f"[distutils]\nindex-servers = private\n\n[private]\nrepository = https://pypi.example.net/\n"
        f"username = deploy\npassword = {v}\n")
    neg("pypirc", "ours", "a section without a password", "[pypi]\nusername = __token__\n")

    # -- tokens with no secret-named key before them: prose and command lines ---------------
    family("cli_flag", [], "a secret after a command-line flag named for it: --token, --password, --api-key, "
                           "--client-secret, sshpass -p, docker login -p")
    for form in ("gh-deploy --token {} --repo acme/infra", "vercel deploy --token={}",
                 "stripe login --api-key {}", "az login --service-principal -u app --password {} --tenant t",
                 "sshpass -p '{}' ssh deploy@10.0.0.7", "docker login -u deploy -p {} registry.example.net"):
        v = g.mixed(ALNUM, 24)
        pos("cli_flag", form.split()[0], v, form.format(v))
    for kind, why, text in (
            ("ours", "a flag's value that is a file", "kubectl --token-file /var/run/secrets/token get pods"),
            ("ours", "stdin", "docker login --password-stdin registry.example.net"),
            ("placeholder", "a variable", "gh-deploy --token $GITHUB_TOKEN"),
            ("placeholder", "a placeholder", "vercel deploy --token=<your-token>"),
            ("ours", "ncl's own instructions (nanoclaw's CLI, sent in every thread)",
             "ncl members add --user telegram:jane --group main")):
        neg("cli_flag", kind, why, text)

    # -- gitleaks' keyword-bound rules: a vendor word in the name, a value with no shape ----
    family("vendor_keyword", ["gitleaks:" + r for r in (
        "adafruit-api-key", "airtable-api-key", "algolia-api-key", "alibaba-secret-key", "asana-client-secret",
        "beamer-api-token", "bitbucket-client-secret", "bittrex-access-key", "bittrex-secret-key",
        "cisco-meraki-api-key", "cloudflare-api-key", "cloudflare-global-api-key", "codecov-access-token",
        "cohere-api-token", "coinbase-access-token", "confluent-access-token", "confluent-secret-key",
        "contentful-delivery-api-token", "datadog-access-token", "discord-api-token", "discord-client-secret",
        "droneci-access-token", "etsy-access-token", "fastly-api-token", "finicity-api-token",
        "finicity-client-secret", "finnhub-access-token", "flickr-access-token", "freemius-secret-key",
        "freshbooks-access-token", "gitter-access-token", "gocardless-api-token", "hashicorp-tf-password",
        "intercom-api-key", "jfrog-api-key", "jfrog-identity-token", "kraken-access-token", "kucoin-access-token",
        "kucoin-secret-key", "launchdarkly-access-token", "linear-client-secret", "linkedin-client-secret",
        "lob-api-key", "looker-client-secret", "mailgun-private-api-token", "mailgun-signing-key",
        "mattermost-access-token", "messagebird-api-token", "netlify-access-token", "new-relic-user-api-id",
        "nytimes-access-token", "okta-access-token", "plaid-secret-key", "privateai-api-token",
        "rapidapi-access-token", "sendbird-access-token", "sentry-access-token", "snyk-api-token",
        "sumologic-access-token", "travisci-access-token", "twitch-api-token", "twitter-access-secret",
        "twitter-access-token", "twitter-api-secret", "yandex-access-token", "yandex-aws-access-token",
        "zendesk-secret-key", "hubspot-api-key", "squarespace-access-token", "heroku-api-key")] + ["detect-secrets:" + d for d in (
        "CloudantDetector", "IbmCloudIamDetector", "IbmCosHmacDetector", "SoftlayerDetector")],
        "a vendor's key under a name that says key, token, secret, password or auth: the value has no "
        "shape of its own, the name is what tells")
    for form, val in (("DATADOG_API_KEY={}", g.mixed(HEX, 32)), ("TWITTER_ACCESS_TOKEN_SECRET={}", g.mixed(ALNUM, 45)),
                      ('"algolia_api_key": "{}"', g.mixed(LOWER_ALNUM, 32)), ("cloudflare_api_token: {}", g.mixed(B64URL, 40)),
                      ("OKTA_API_TOKEN={}", "00" + g.mixed(B64URL, 40)), ("HUBSPOT_ACCESS_TOKEN='{}'", g.mixed(HEX, 32).upper()),
                      ("$config['secret_key'] => '{}'", "sk_" + g.mixed(ALNUM, 29)),
                      ("cloudant_password = {}", g.mixed(HEX, 64)), ("ibm_cloud_iam_api_key: {}", g.mixed(B64URL, 44))):
        pos("vendor_keyword", form.split("=")[0].split(":")[0].strip("\"$'[] "), val, form.format(val))
    for kind, why, text in (("ours", "a site setting beside a vendor word", "DATADOG_SITE=datadoghq.eu"),
                            ("ours", "an OAuth client id is public", "discord_client_id: 118739204651827364"),
                            ("ours", "a vendor word and a URL", "okta_domain: https://acme.okta.com")):
        neg("vendor_keyword", kind, why, text)

    # -- encoded images are not tokens -------------------------------------------------------
    for w, h2 in ((64, 64), (48, 96), (128, 32)):
        b = base64.b64encode(png(g, w, h2)).decode()
        neg("lookalike", "ours", f"a base64 PNG ({w}x{h2}) pasted in a message", "data:image/png;base64," + b)
    neg("lookalike", "ours", "a base64 PNG without its data: prefix", base64.b64encode(png(g, 64, 48)).decode())

    # -- a look-alike for every family that has none: its shape filled with x, as
    # documentation writes a placeholder (the rule sets allow-list these) --------
    for fam in FAMILIES:
        if any(n["family"] == fam for n in NEGATIVES):
            continue
        first = next(p for p in POSITIVES if p["family"] == fam)
        value = first["value"]
        cut = min(next((i + 1 for i, c in enumerate(value) if c in "_-.~|"), 4), 8)
        neg(fam, "placeholder", "the shape filled with x (a documentation placeholder)",
            value[:cut] + "x" * max(len(value) - cut, 12))


# ---------------------------------------------------------------------------
# contexts
# ---------------------------------------------------------------------------

ANY = "any"
RAW_ARGS = ["tool_args"]
CONTEXTS = [
    {"id": "prose", "template": "here is my key {} thanks", "applies": "all", "placements": ANY,
     "note": "ASCII words and spaces around"},
    {"id": "cjk_before", "template": "我的密钥是{}", "applies": "all", "placements": ANY,
     "note": "a CJK character right before: no ASCII boundary character"},
    {"id": "cjk_after", "template": "{}是我的密钥", "applies": "all", "placements": ANY,
     "note": "a CJK character right after"},
    {"id": "letter_before", "template": "key:{}", "applies": "all", "placements": ANY,
     "note": "a word and a colon right before"},
    {"id": "letter_glued", "template": "token{}", "applies": "all", "placements": ANY,
     "note": "letters glued to the text: no word boundary before it"},
    {"id": "alone", "template": "{}", "applies": "all", "placements": ANY, "note": "the text is the whole string"},
    {"id": "url_query", "template": "https://api.example.com/v1/items?ref={}&page=2", "applies": "url_safe",
     "placements": ANY, "note": "a query value under a neutral name; only texts of [A-Za-z0-9._~:-] "
                                "(a value under a secret-named key, ?token=..., goes whatever its shape)"},
    {"id": "percent_encoded", "template": "https://api.example.com/v1/items?auth={}", "applies": "all",
     "placements": ANY, "transform": "percent_encode",
     "note": "the text percent-encoded as a query value (urllib.parse.quote(text, safe='')): "
             "spaces become %20, line breaks %0A, / + = become %2F %2B %3D"},
    {"id": "markdown_inline", "template": "set `{}` in config", "applies": "single_line", "placements": ANY,
     "note": "inline code"},
    {"id": "markdown_fence", "template": "```\n{}\n```", "applies": "all", "placements": ANY,
     "note": "a fenced code block"},
    {"id": "env_line", "template": "FOO=1\n{}\nBAR=2", "applies": "all", "placements": ANY,
     "note": "a line between .env lines"},
    {"id": "json_after_newline", "template": "first line\n{}", "applies": "all", "placements": RAW_ARGS,
     "note": "in the tool call's raw JSON arguments the text follows the two characters \\n"},
    {"id": "json_after_tab", "template": "name\t{}", "applies": "all", "placements": RAW_ARGS,
     "note": "in raw JSON arguments the text follows \\t"},
    {"id": "json_in_quotes", "template": "value \"{}\" here", "applies": "all", "placements": RAW_ARGS,
     "note": "in raw JSON arguments the text stands between \\\" and \\\""},
    {"id": "json_after_unicode", "template": "密钥{}", "applies": "all", "placements": RAW_ARGS,
     "note": "arguments serialized with ensure_ascii: the text follows \\u94a5 (a hex digit before it)"},
    {"id": "json_after_control", "template": "\u001b{}", "applies": "all", "placements": RAW_ARGS,
     "note": "a control character (ESC) right before: every JSON encoder writes it as \\u001b, "
             "ensure_ascii or not"},
]


def applies(ctx: dict, text: str) -> bool:
    rule = ctx["applies"]
    if rule == "all":
        return True
    if rule == "single_line":
        return "\n" not in text and "\r" not in text
    if rule == "url_safe":
        return bool(text) and set(text) <= URL_SAFE
    raise ValueError(rule)


def render(ctx: dict, text: str) -> str:
    """The string a context makes of a text (what is pasted)."""
    if ctx.get("transform") == "percent_encode":
        text = urllib.parse.quote(text, safe="")
    return ctx["template"].replace("{}", text)


# ---------------------------------------------------------------------------
# invariants and output
# ---------------------------------------------------------------------------


def grams(s: str) -> set[str]:
    return {s[i:i + GRAM] for i in range(len(s) - GRAM + 1)}


def check() -> None:
    secrets_all: list[str] = []
    for p in POSITIVES:
        assert p["value"] in p["text"], p["id"]
        assert len(p["value"]) >= 8, p["id"]
        secrets_all.append(p["value"])
        for extra in p.get("also_secret", []):
            assert extra in p["text"], p["id"]
            secrets_all.append(extra)
    assert len(secrets_all) == len(set(secrets_all)), "values are not unique"
    ids = [p["id"] for p in POSITIVES] + [n["id"] for n in NEGATIVES]
    assert len(ids) == len(set(ids)), "ids are not unique"
    texts = [n["text"] for n in NEGATIVES]
    assert len(texts) == len(set(texts)), "negative texts are not unique"
    bad: dict[str, str] = {}
    for v in secrets_all:
        for gram in grams(v):
            bad.setdefault(gram, v)
    for n in NEGATIVES:
        for gram in grams(n["text"]):
            assert gram not in bad, f"{n['id']} shares {gram!r} with a value ({bad[gram][:30]}…)"
    for c in CONTEXTS:
        for gram in grams(c["template"]):
            assert gram not in bad, f"context {c['id']} shares {gram!r} with a value"
    for p in POSITIVES + NEGATIVES:
        assert p["family"] in FAMILIES, p["id"]
    for fam in FAMILIES:
        assert any(p["family"] == fam for p in POSITIVES + NEGATIVES), fam


def corpus(seed: int) -> dict:
    FAMILIES.clear()
    POSITIVES.clear()
    NEGATIVES.clear()
    build(Gen(seed))
    # the families added later draw from their own generator, so every
    # earlier value (and the home planted from them) stays as it was
    build_more(Gen(seed * 7919 + 55))
    check()
    return {"seed": seed, "generator": GENERATOR, "families": FAMILIES, "positives": POSITIVES,
            "negatives": NEGATIVES, "contexts": CONTEXTS}


def dumps(obj: object) -> str:
    return json.dumps(obj, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, default=HERE / "corpus.json")
    args = ap.parse_args()
    data = corpus(args.seed)
    args.out.write_text(dumps(data), encoding="utf-8")
    print(f"{args.out}: {len(data['families'])} families, {len(data['positives'])} positives, "
          f"{len(data['negatives'])} negatives, {len(data['contexts'])} contexts", file=sys.stderr)


if __name__ == "__main__":
    main()
