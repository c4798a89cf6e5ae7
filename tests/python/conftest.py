"""Shared fixtures: every test that takes `device` runs on cpu and sim:0, and on cuda:0 where a
GPU is present."""

import numpy as np
import pytest

import oneflow_lite as ofl

DEVICES = ["cpu", "sim:0"] + (["cuda:0"] if ofl.device_count("cuda") > 0 else [])


@pytest.fixture(params=DEVICES)
def device(request):
    return request.param


@pytest.fixture
def rng():
    return np.random.default_rng(20261126)
