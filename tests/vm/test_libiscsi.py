# SPDX-License-Identifier: GPL-2.0
"""libiscsi's userspace tools against the target: INQUIRY (standard and the
VPD pages multipath and udev rely on), READ CAPACITY(16), and a refusal for
a target that does not exist."""

import pytest

from vmlib import initiator as ini
from vmlib.target import Lun, Target, iqn
from vmlib.util import MiB, run

SCSI_ID = "iet-test-id-0001"        # 16 characters, the maximum
SCSI_SN = "IETSN0001"
LOGIN_STATUS_TARGET_NOT_FOUND = 0x0203


def url(name, lun=0):
    return f"iscsi://127.0.0.1/{name}/{lun}"


def libiscsi(tool, *args, check=True):
    return run([tool, "-i", ini.initiator_name(), *args], check=check, timeout=60)


@pytest.fixture
def lun0(ietd, backing):
    """A 64 MiB fileio LUN with a set ScsiId and ScsiSN; its URL."""
    name = iqn("libiscsi")
    path = str(backing("libiscsi", 64 * MiB))
    ietd(Target(name, [Lun(0, path, params={"ScsiId": SCSI_ID, "ScsiSN": SCSI_SN})]))
    return url(name)


def test_standard_inquiry_reports_a_connected_disk(lun0):
    out = libiscsi("iscsi-inq", lun0).stdout
    assert "Peripheral Qualifier:CONNECTED" in out
    assert "Peripheral Device Type:DIRECT_ACCESS" in out


def test_vpd_unit_serial_number_is_the_configured_scsi_sn(lun0):
    out = libiscsi("iscsi-inq", "-e", "1", "-c", str(0x80), lun0).stdout
    assert SCSI_SN in out


def test_vpd_device_identification_carries_the_configured_scsi_id(lun0):
    out = libiscsi("iscsi-inq", "-e", "1", "-c", str(0x83), lun0).stdout
    assert SCSI_ID in out


def test_vpd_supported_pages_lists_0x80_and_0x83(lun0):
    out = libiscsi("iscsi-inq", "-e", "1", "-c", "0", lun0).stdout
    assert "Page:0x80" in out and "Page:0x83" in out


def test_read_capacity_16_reports_the_lun_size(lun0):
    out = libiscsi("iscsi-readcapacity16", lun0).stdout
    assert "RETURNED LOGICAL BLOCK ADDRESS:131071" in out      # 64 MiB / 512 - 1
    assert "LOGICAL BLOCK LENGTH IN BYTES:512" in out
    assert "Total size:67108864" in out


def test_inquiry_to_a_missing_target_fails_as_not_found(lun0):
    cp = libiscsi("iscsi-inq", url(iqn("missing")), check=False)
    assert cp.returncode != 0
    assert f"({LOGIN_STATUS_TARGET_NOT_FOUND})" in cp.stdout + cp.stderr
