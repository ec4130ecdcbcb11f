#!/usr/bin/env python3
"""Proof that scan.py never lets detect-secrets verify a key online.

    check_no_network.py

Writes a corpus of key-shaped strings that the verifying plugins (Slack,
Stripe, Telegram, AWS, Mailchimp) would test against their providers, then
scans it twice in this process, with scan.py's socket guard installed and
every `requests` send counted:

1. control: detect-secrets' verification filter switched on, as the CLI does
   without --no-verify. This must attempt requests (else the corpus proves
   nothing);
2. scan.py's own scan_dir: must attempt none, and still find every key.

Prints one line per run and exits 0 when both hold, 1 otherwise. The keys
are assembled at run time, so no key-shaped literal is in this file.
"""

import os
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the clone
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scan  # noqa: E402  (installs the socket guard)

import requests  # noqa: E402
from detect_secrets.constants import VerifiedResult  # noqa: E402
from detect_secrets.settings import default_settings  # noqa: E402

SENDS = []
_send = requests.Session.send


def counting_send(self, request, **kwargs):
    SENDS.append(f"{request.method} {request.url.split('?')[0][:60]}")
    return _send(self, request, **kwargs)


requests.Session.send = counting_send


def corpus():
    return "\n".join([
        "slack = '" + "xo" + "xb-" + "2814573901-4027518634-" + "q8wzt3kfm2vj" + "'",
        "stripe = '" + "sk" + "_live_" + "Zq4Tn8Wm2Xr6Vb1Ly5Pc9Hd3" + "'",
        "telegram = '" + "7359142068" + ":" + "AAHk3_Pq9zWx-Lm4Rt7Vb2Yc8Nd5Fg1Ju6S" + "'",
        "aws_access_key_id = '" + "AK" + "IA" + "Q4ZT7MWX2PLR9VNB" + "'",
        "aws_secret_access_key = '" + "r7Kq2Zm9Xw4Tn1Vb8Ly3Pc6Hd0Fg5Js2Qa9We4U" + "'",
        "mailchimp = '" + "3f9c2a7e1b8d4f6a0c5e9b2d7a1f4c8e" + "-us" + "14" + "'",
    ]) + "\n"


def control(root):
    """The scan with verification on (the CLI without --no-verify)."""
    found = set()
    with default_settings() as settings:
        settings.filters[scan.VERIFY_FILTER] = {"min_level": VerifiedResult.UNVERIFIED.value}
        for rel in scan.files_under(root):
            for s in scan.ds_scan.scan_file(os.path.join(root, rel)):
                found.add(s.type)
    return found


def main():
    ok = True
    with tempfile.TemporaryDirectory() as root:
        with open(os.path.join(root, "keys.txt"), "w") as f:
            f.write(corpus())

        types = control(root)
        sends, attempts = len(SENDS), len(scan.NETWORK_ATTEMPTS)
        print(f"control (verification on): {sends} requests sent, {attempts} socket attempts refused, "
              f"{len(types)} types: {sorted(types)}")
        if sends == 0 or attempts == 0:
            print("  FAIL: the control made no attempt, so the corpus proves nothing")
            ok = False

        del SENDS[:]
        del scan.NETWORK_ATTEMPTS[:]
        findings = scan.scan_dir(root)
        got = {f["type"] for f in findings}
        print(f"scan.py (verification off): {len(SENDS)} requests sent, "
              f"{len(scan.NETWORK_ATTEMPTS)} socket attempts, {len(got)} types: {sorted(got)}")
        if SENDS or scan.NETWORK_ATTEMPTS:
            print("  FAIL: scan.py attempted the network")
            ok = False
        if not types <= got:
            print(f"  FAIL: scan.py lost types the control found: {sorted(types - got)}")
            ok = False
    print("ok" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
