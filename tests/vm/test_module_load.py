# SPDX-License-Identifier: GPL-2.0
"""iscsi_trgt loads, unloads and loads again, cleanly each time."""

from pathlib import Path

import pytest

from vmlib.target import assert_module_gone, genl_family_registered

# The generic netlink family's registration and the module's teardown
# differ from kernel to kernel: on every kernel (pytest -m paths).
pytestmark = pytest.mark.paths


def test_module_loads_with_its_proc_files_and_netlink_family(unloaded_kmod):
    unloaded_kmod.load()
    assert Path("/proc/net/iet/volume").is_file()
    assert Path("/proc/net/iet/session").is_file()
    assert genl_family_registered("iscsi_trgt")


def test_module_unloads_leaving_nothing_behind(unloaded_kmod):
    unloaded_kmod.load()
    unloaded_kmod.unload()
    assert_module_gone(unloaded_kmod)


def test_module_loads_again_after_unload(unloaded_kmod):
    unloaded_kmod.load()
    unloaded_kmod.unload()
    unloaded_kmod.load()
    assert Path("/proc/net/iet/volume").read_text() == ""
    unloaded_kmod.unload()
    assert_module_gone(unloaded_kmod)
