"""Settings from the environment: one reader per kind of value, exact one-line errors."""

from __future__ import annotations

import os
import re
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from audit.errors import InputError
from pipeline.network import network_transport
from pipeline.settings import (
    BASE_URL_VARIABLES,
    BUILD_MEMORY,
    PROXY_VARIABLES,
    Proxies,
    Settings,
    env_memory,
    source_date_epoch,
)
from tests.cli import citeseal

ROOT = Path(__file__).resolve().parents[2]
VARIABLE = r'"((?:CITESEAL|NCBI|OPENFDA)_[A-Z_]+|SOURCE_DATE_EPOCH)"'  # as a literal in code
ADVICE = "fix or unset it (README, Configuration, lists every variable)"


def test_an_empty_environment_gives_the_defaults() -> None:
    settings = Settings.from_env({})
    assert (settings.timeout, settings.max_attempts, settings.tool) == (30.0, 6, "citeseal")
    assert (settings.email, settings.ncbi_api_key, settings.demo_key) == (None, None, False)
    assert settings.build_memory == BUILD_MEMORY == "128MB"


def test_blank_values_mean_the_default() -> None:
    names = ("CITESEAL_TIMEOUT", "CITESEAL_MAX_ATTEMPTS", "CITESEAL_TOOL")
    blank: dict[str, str] = dict.fromkeys(names, "  ")
    assert Settings.from_env(blank) == Settings.from_env({})


def test_good_values_are_read() -> None:
    settings = Settings.from_env(
        {
            "CITESEAL_TIMEOUT": "2.5",
            "CITESEAL_MAX_ATTEMPTS": "3",
            "CITESEAL_DEMO_KEY": "Yes",
            "CITESEAL_HISTORY_BACKFILL": "0",
            "CITESEAL_EMAIL": "team@example.org",
            "CITESEAL_TOOL": "my-tool",
            "NCBI_API_KEY": "abc123",
            "CITESEAL_BUILD_MEMORY": "2GB",
        }
    )
    assert (settings.timeout, settings.max_attempts) == (2.5, 3)
    assert (settings.demo_key, settings.history_backfill) == (True, False)
    assert (settings.email, settings.tool, settings.ncbi_api_key) == (
        "team@example.org",
        "my-tool",
        "abc123",
    )
    assert settings.build_memory == "2GB"


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("CITESEAL_TIMEOUT", "abc", "CITESEAL_TIMEOUT must be a number of seconds > 0, got 'abc'"),
        ("CITESEAL_TIMEOUT", "0", "CITESEAL_TIMEOUT must be a number of seconds > 0, got '0'"),
        ("CITESEAL_TIMEOUT", "-1", "CITESEAL_TIMEOUT must be a number of seconds > 0, got '-1'"),
        ("CITESEAL_TIMEOUT", "nan", "CITESEAL_TIMEOUT must be a number of seconds > 0, got 'nan'"),
        ("CITESEAL_TIMEOUT", "inf", "CITESEAL_TIMEOUT must be a number of seconds > 0, got 'inf'"),
        (
            "CITESEAL_MAX_ATTEMPTS",
            "x",
            "CITESEAL_MAX_ATTEMPTS must be a whole number from 1 to 100, got 'x'",
        ),
        (
            "CITESEAL_MAX_ATTEMPTS",
            "0",
            "CITESEAL_MAX_ATTEMPTS must be a whole number from 1 to 100, got '0'",
        ),
        (
            "CITESEAL_MAX_ATTEMPTS",
            "2.5",
            "CITESEAL_MAX_ATTEMPTS must be a whole number from 1 to 100, got '2.5'",
        ),
        (
            "CITESEAL_MAX_ATTEMPTS",
            "٣",  # an Arabic-Indic digit: isdigit() but not a number anyone means here
            "CITESEAL_MAX_ATTEMPTS must be a whole number from 1 to 100, got '٣'",
        ),
        (
            "CITESEAL_DEMO_KEY",
            "maybe",
            "CITESEAL_DEMO_KEY must be 1, true, yes, on, 0, false, no or off, got 'maybe'",
        ),
        (
            "CITESEAL_HISTORY_BACKFILL",
            "2",
            "CITESEAL_HISTORY_BACKFILL must be 1, true, yes, on, 0, false, no or off, got '2'",
        ),
        (
            "CITESEAL_TOOL",
            "my tool",
            "CITESEAL_TOOL must be 1 to 64 letters, digits, '.', '_' or '-', got 'my tool'",
        ),
        (
            "CITESEAL_BUILD_MEMORY",
            "lots",
            "CITESEAL_BUILD_MEMORY must be a size such as 512MB or 2GB, got 'lots'",
        ),
    ],
)
def test_a_bad_value_is_an_error_naming_the_variable_and_the_form(
    name: str, value: str, message: str
) -> None:
    with pytest.raises(InputError) as caught:
        Settings.from_env({name: value})
    assert caught.value.message == message
    assert caught.value.advice == ADVICE
    assert caught.value.exit_code == 2


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        (
            "CITESEAL_EMAIL",
            "secret-person",
            "CITESEAL_EMAIL must be an e-mail address (name@host.domain) (the value is not shown)",
        ),
        (
            "NCBI_API_KEY",
            "secret key",
            "NCBI_API_KEY must be printable ASCII without spaces (the value is not shown)",
        ),
        (
            "OPENFDA_API_KEY",
            "sécret",
            "OPENFDA_API_KEY must be printable ASCII without spaces (the value is not shown)",
        ),
    ],
)
def test_a_bad_secret_is_named_without_showing_its_value(
    name: str, value: str, message: str
) -> None:
    with pytest.raises(InputError) as caught:
        Settings.from_env({name: value})
    assert caught.value.message == message
    assert value not in caught.value.message


def test_source_date_epoch_is_one_reader_for_the_audit_and_the_site() -> None:
    assert source_date_epoch({}) is None
    assert source_date_epoch({"SOURCE_DATE_EPOCH": " 0 "}) == datetime(1970, 1, 1, tzinfo=UTC)
    for bad in ("yesterday", "-5", "1e9", "99999999999999999999"):
        with pytest.raises(InputError) as caught:
            source_date_epoch({"SOURCE_DATE_EPOCH": bad})
        assert caught.value.message == (
            f"SOURCE_DATE_EPOCH must be a whole number of seconds since 1970, got {bad!r}"
        )


def test_the_writer_reads_the_memory_limit_with_the_same_reader() -> None:
    assert env_memory({"CITESEAL_BUILD_MEMORY": "512 MiB"}) == "512 MiB"
    assert env_memory({}) == "128MB"


def run_cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return citeseal(*args, env={**os.environ, **env}, cwd=ROOT)


@pytest.mark.parametrize(
    ("env", "args", "message"),
    [
        (
            {"CITESEAL_TIMEOUT": "abc"},
            ("key", "id", "--demo-key"),
            "CITESEAL_TIMEOUT must be a number of seconds > 0, got 'abc'",
        ),
        (
            {"CITESEAL_VERBOSE": "loud"},
            ("key", "id", "--demo-key"),
            "CITESEAL_VERBOSE must be 1, true, yes, on, 0, false, no or off, got 'loud'",
        ),
        (
            {"SOURCE_DATE_EPOCH": "soon"},
            ("audit", "-", "--snapshot", "no-such-snapshot", "--demo-key"),
            "SOURCE_DATE_EPOCH must be a whole number of seconds since 1970, got 'soon'",
        ),
    ],
)
def test_citeseal_timeout_abc_is_a_one_line_error_with_exit_2(
    env: dict[str, str], args: tuple[str, ...], message: str
) -> None:
    done = run_cli(env, *args)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"error: {message}\nhint: {ADVICE}\n"


def test_every_environment_variable_the_code_reads_is_documented() -> None:
    names: set[str] = set()
    for folder in ("audit", "pipeline"):
        for path in (ROOT / folder).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            names |= set(
                re.findall(r'"((?:CITESEAL|NCBI|OPENFDA)_[A-Z_]+|SOURCE_DATE_EPOCH)"', text)
            )
    table = (ROOT / "README.md").read_text(encoding="utf-8").split("## Configuration", 1)[1]
    table = table.split("\n## ", 1)[0]
    names |= set(BASE_URL_VARIABLES.values()) | {"SSL_CERT_FILE", "SSL_CERT_DIR"}
    names |= {n.upper() for pair in PROXY_VARIABLES.values() for n in pair} | {"NO_PROXY"}
    assert names >= {"CITESEAL_TIMEOUT", "CITESEAL_BUILD_MEMORY", "SOURCE_DATE_EPOCH"}
    assert sorted(n for n in names if f"`{n}" not in table) == []


# -- base URLs, proxies, CA certificates -------------------------------------------------------
def test_each_source_base_url_is_read_from_its_own_variable() -> None:
    settings = Settings.from_env(
        {
            "CITESEAL_PUBMED_URL": "https://mirror.example.org/eutils/",
            "CITESEAL_OPENFDA_URL": "http://127.0.0.1:8080",
            "CITESEAL_CROSSREF_URL": "http://[::1]:9000/crossref",
            "CITESEAL_EUROPEPMC_URL": "http://localhost:7000",
        }
    )
    assert settings.base_url("pubmed") == "https://mirror.example.org/eutils"
    assert settings.base_url("openfda") == "http://127.0.0.1:8080"
    assert settings.base_url("crossref") == "http://[::1]:9000/crossref"
    assert settings.base_url("europepmc") == "http://localhost:7000"
    assert settings.base_url("clinicaltrials") == "https://clinicaltrials.gov/api/v2"
    assert sorted(BASE_URL_VARIABLES.values()) == [
        "CITESEAL_ARXIV_URL",
        "CITESEAL_CLINICALTRIALS_URL",
        "CITESEAL_CROSSREF_URL",
        "CITESEAL_EUROPEPMC_URL",
        "CITESEAL_OPENALEX_URL",
        "CITESEAL_OPENFDA_URL",
        "CITESEAL_PUBMED_URL",
        "CITESEAL_PUBTATOR3_URL",
    ]


@pytest.mark.parametrize(
    "bad",
    [
        "http://mirror.example.org",  # plain http off the machine
        "ftp://127.0.0.1/x",
        "https://user:secret@mirror.example.org",
        "https://mirror.example.org/eutils?db=pubmed",
        "https://mirror.example.org/#top",
        "https://mirror.example.org:99999",
        "mirror.example.org",
        "https://",
    ],
)
def test_a_bad_base_url_is_a_one_line_error_naming_the_variable(bad: str) -> None:
    with pytest.raises(InputError) as caught:
        Settings.from_env({"CITESEAL_CLINICALTRIALS_URL": bad})
    assert caught.value.message == (
        "CITESEAL_CLINICALTRIALS_URL must be an https:// address (http:// only for a loopback "
        f"host such as 127.0.0.1), without user, query or fragment, got {bad!r}"
    )
    assert caught.value.advice == ADVICE


def test_the_standard_proxy_variables_are_read_lower_case_first() -> None:
    settings = Settings.from_env(
        {
            "https_proxy": "http://lower.example:3128",
            "HTTPS_PROXY": "http://upper.example:3128",
            "HTTP_PROXY": "proxy.example:8080",  # no scheme: http://, as for curl
            "ALL_PROXY": "https://all.example",
            "NO_PROXY": " localhost, .internal.example ,,10.0.0.0/8 ",
        }
    )
    assert settings.proxies == Proxies(
        https="http://lower.example:3128",
        http="http://proxy.example:8080",
        all="https://all.example",
        no_proxy=("localhost", ".internal.example", "10.0.0.0/8"),
    )
    assert Settings.from_env({}).proxies == Proxies()


def test_a_bad_proxy_is_a_one_line_error_with_its_credentials_redacted() -> None:
    settings = Settings.from_env({"HTTPS_PROXY": "socks5://alice:s3cret-pw@proxy.example:1080"})
    with pytest.raises(InputError) as caught:
        network_transport(settings)  # where a live request is prepared, not before
    assert caught.value.message == (
        "HTTPS_PROXY must be a proxy address http://[USER:PASSWORD@]HOST[:PORT] or https://…, "
        "got 'socks5://[REDACTED]@proxy.example:1080'"
    )


def test_proxy_credentials_are_secrets_of_the_settings() -> None:
    settings = Settings.from_env({"ALL_PROXY": "http://alice:s3cret-pw@proxy.example:3128"})
    assert settings.secrets() == ["alice:s3cret-pw", "s3cret-pw"]


def test_ssl_cert_file_and_dir_must_exist(tmp_path: Path) -> None:
    (tmp_path / "ca.pem").write_text("pem\n")
    settings = Settings.from_env({"SSL_CERT_FILE": str(tmp_path / "ca.pem")})
    assert settings.ca_file == tmp_path / "ca.pem"
    assert Settings.from_env({"SSL_CERT_DIR": str(tmp_path)}).ca_dir == tmp_path
    for name, value, what in (
        ("SSL_CERT_FILE", tmp_path / "nope.pem", "file"),
        ("SSL_CERT_FILE", tmp_path, "file"),
        ("SSL_CERT_DIR", tmp_path / "ca.pem", "folder"),
    ):
        with pytest.raises(InputError) as caught:
            network_transport(Settings.from_env({name: str(value)}))
        assert caught.value.message == f"{name} must be an existing {what}, got {str(value)!r}"


def test_a_bad_proxy_or_ca_variable_set_for_other_tools_never_stops_an_offline_command(
    tmp_path: Path,
) -> None:
    env = {
        "ALL_PROXY": "socks5://proxy.example:1080",
        "SSL_CERT_FILE": str(tmp_path / "nope.pem"),
        "CITESEAL_DATA_DIR": str(tmp_path / "data"),
    }
    done = run_cli(env, "handle", "mint", "pmid:99000001/abstract.3", "--demo-key")
    assert (done.returncode, done.stdout) == (0, "pmid:99000001/abstract.3~awhr0\n")
    settings = Settings.from_env(env)
    assert (settings.proxies, settings.ca_file) == (Proxies(), None)  # no half-read route
    with pytest.raises(InputError) as caught:
        network_transport(settings)
    assert caught.value.message.startswith("ALL_PROXY must be a proxy address")
