"""Checks of decimal integers given as text (options, job ids)."""

import re


def is_uint(s):
    return bool(re.fullmatch(r"[0-9]+", s or ""))


def is_posint(s):
    return bool(re.fullmatch(r"[1-9][0-9]*", s or ""))


def is_u64(s):
    return bool(re.fullmatch(r"[0-9]{1,20}", s or "")) and int(s) <= 2**64 - 1

