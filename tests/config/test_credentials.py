"""Passwords in URLs are shown as ``***`` (placeholders, which hold none, as they are), and
placeholders expand to percent-encoded values that redis-py decodes back."""

from __future__ import annotations

import pytest
from redis.connection import parse_url

from msagent.credentials import expand, redact, redact_text


@pytest.mark.parametrize("url, shown", [
    ("redis://:hunter2@10.0.0.5:6379/0", "redis://:***@10.0.0.5:6379/0"),
    ("rediss://user:p@ss/w#rd@host:6380/1", "rediss://user:***@host:6380/1"),
    ("unix://:pw@/run/redis.sock?db=0", "unix://:***@/run/redis.sock?db=0"),
    ("redis://host/0?password=pw&db=2", "redis://host/0?password=***&db=2"),
    ("redis://:${REDIS_PASSWORD}@host/0", "redis://:${REDIS_PASSWORD}@host/0"),
    ("redis://:${file:/run/secrets/redis}@host/0", "redis://:${file:/run/secrets/redis}@host/0"),
    ("redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"),
])
def test_a_password_is_shown_as_stars(url: str, shown: str):
    assert redact(url) == shown


def test_every_url_of_a_text_is_redacted():
    text = ('[services.model_pool]\nurl = "redis://:hunter2@10.0.0.5:6379/0"\n'
            "mirror = 'redis://u:swordfish@h/1' # and s3://bucket/a:b@c stays\n")
    shown = redact_text(text)
    assert "hunter2" not in shown and "swordfish" not in shown
    assert 'url = "redis://:***@10.0.0.5:6379/0"' in shown and "s3://bucket/a:b@c" in shown


def test_a_placeholder_expands_to_a_value_redis_reads_back(tmp_path, monkeypatch):
    monkeypatch.setenv("MSAGENT_TEST_PW", "a@b/c:d%e")
    (tmp_path / "pw").write_text("from a file\n")
    assert parse_url(expand("redis://:${MSAGENT_TEST_PW}@h:1/0"))["password"] == "a@b/c:d%e"
    assert parse_url(expand(f"redis://:${{file:{tmp_path / 'pw'}}}@h:1/0"))["password"] == \
        "from a file"
    assert expand("redis://h:1/0") == "redis://h:1/0"
