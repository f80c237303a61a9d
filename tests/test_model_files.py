"""Damaged and hostile network files and model specs: each is a ``ModelFileError`` /
``ModelError`` that names the file (or spec), in the library and as one CLI line; never a
raw traceback, and never a silently different network."""

from __future__ import annotations

import gzip
import struct

import numpy as np
import pytest

from zerochess.cli import main
from zerochess.errors import ModelError, ModelFileError, UserError
from zerochess.neural import load_model
from zerochess.neural.lc0_weights import lc0_params

from hostile import NETWORK_CONFIG, damaged_networks, network_bytes, write_case


@pytest.fixture(scope="module")
def raw() -> bytes:
    return network_bytes(seed=1)


def test_the_valid_network_loads(tmp_path, raw):
    for name, data in (("net.pb.gz", gzip.compress(raw)), ("net.pb", raw)):
        path = write_case(tmp_path, name, data)
        config, _ = lc0_params(raw)
        assert config["blocks"] == NETWORK_CONFIG["blocks"]
        assert load_model(str(path)).name == f"lc0:{name}"


@pytest.mark.parametrize("case", sorted(damaged_networks(b"x")))
def test_damaged_files_name_the_file(tmp_path, raw, case):
    name, content = damaged_networks(raw)[case]
    path = write_case(tmp_path / case, name, content)
    with pytest.raises(ModelFileError) as err:
        load_model(str(path))
    assert str(path) in str(err.value) and "\n" not in str(err.value)


def test_concatenated_networks_are_not_merged(tmp_path, raw):
    """zlib decompresses concatenated gzip streams and protobuf merges repeated messages:
    both would load as one network with twice the residual blocks."""
    path = write_case(tmp_path, "two.pb.gz", gzip.compress(raw) + gzip.compress(raw))
    with pytest.raises(ModelFileError, match="more than one gzip stream"):
        load_model(str(path))
    path = write_case(tmp_path, "two.pb", raw + raw)
    with pytest.raises(ModelFileError, match="more than one lc0 network"):
        load_model(str(path))


def test_non_finite_weights_are_refused(tmp_path):
    from zerochess.neural.resnet import SEResNet, init_params

    from lc0_reference import lc0_net_bytes

    params = init_params(SEResNet(**NETWORK_CONFIG), 0, bias_scale=0.1)
    # the exporter refuses NaN, so plant it in the file: a float32 layer with a marker value
    marker = struct.pack("<f", np.float32(12345.678))
    params["value_fc2"]["bias"] = np.frombuffer(marker * 3, np.float32).copy()
    raw = lc0_net_bytes(NETWORK_CONFIG, params, encoding="float32")
    assert raw.count(marker) == 3
    raw = raw.replace(marker, struct.pack("<f", float("nan")), 1)
    path = write_case(tmp_path, "nan.pb.gz", gzip.compress(raw))
    with pytest.raises(ModelFileError, match="NaN or infinite"):
        load_model(str(path))


@pytest.mark.parametrize("spec, needle", [
    (None, "must be a string"),
    (5, "must be a string"),
    ("", "unknown model spec"),
    ("resnet:0x8", "blocks must be in"),
    ("resnet:1x0", "filters in"),
    ("resnet:1x4096", "filters in"),
    ("resnet:100x1024", "parameters"),
    ("resnet:1x8:99999999999999999999999", "seed must be in"),
    ("lcz:../../etc/passwd", "lcz"),
    ("/etc/passwd", "unknown model spec"),
    ("missing.pb.gz", "not found: 'missing.pb.gz'"),
])
def test_bad_specs(spec, needle):
    with pytest.raises(ModelError, match=needle.replace("(", r"\(")):
        load_model(spec)


def test_cli_one_line_error(tmp_path, raw, capsys):
    path = write_case(tmp_path, "cut.pb.gz", gzip.compress(raw)[:100])
    assert main(["analyse", "startpos", "--visits", "2", "--model", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and str(path) in err and "truncated" in err
    assert len(err.strip().splitlines()) == 1


def test_errors_are_user_errors_and_value_errors():
    for cls in (ModelError, ModelFileError):
        assert issubclass(cls, UserError) and issubclass(cls, ValueError)
