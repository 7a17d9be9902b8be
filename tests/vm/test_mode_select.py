# SPDX-License-Identifier: GPL-2.0
"""MODE SELECT through the kernel initiator: Linux's own cache_type switch
(the caching page's WCE), software write protect, descriptor-format sense
and task aborted status (the control page's SWP, D_SENSE and TAS), each
honoured and reported back by MODE SENSE, and every other change refused
with a pointer to it; on a write-through LUN, by default, none of them
(ModeSelect). (What TAS does: test_task_attr.py.)"""

import glob
from pathlib import Path

import pytest

from vmlib.target import Lun, Target, ietadm, iqn
from vmlib.util import MiB, run

# The control page as IET reports it: TST 001b, GLTSD, QAM 1, TAS, BUSY
# TIMEOUT 0xffff.
CONTROL = bytes([0x0a, 0x0a, 0x22, 0x10, 0x00, 0x40, 0, 0, 0xff, 0xff, 0, 0])


@pytest.fixture
def luns(ietd, backing, initiator):
    """(read-write disk that allows MODE SELECT, read-only disk)"""
    name = iqn("modeselect")
    ietd(Target(name, [Lun(0, str(backing("ms", 16 * MiB)),
                           params={"ModeSelect": "Yes"}),
                       Lun(1, str(backing("ms-ro", 16 * MiB)),
                           params={"IOMode": "ro"})]))
    s = initiator.login(name)
    return s.disk(0), s.disk(1)


def cache_type(dev):
    return Path(glob.glob(f"/sys/block/{Path(dev).name}/device/scsi_disk/*/cache_type")[0])


# sg_raw opens the disk read-only (-R): Linux turns a disk read-only as
# soon as it sees WP, and SG_IO needs no more for root.
def mode_select(dev, page, tmp_path, cdb1=0x10):
    """MODE SELECT(6) of one page, no block descriptor: (status, report)."""
    data = bytes(4) + page
    f = tmp_path / "ms"
    f.write_bytes(data)
    cp = run(["sg_raw", "-R", "-v", "-s", str(len(data)), "-i", str(f), dev,
              "15", f"{cdb1:02x}", "00", "00", f"{len(data):02x}", "00"],
             check=False)
    return cp.returncode, cp.stdout + cp.stderr


def mode_sense(dev, page, pc, tmp_path):
    """The page of MODE SENSE(6), without block descriptors."""
    f = tmp_path / "sense"
    run(["sg_raw", "-R", "-r", "252", "-o", str(f), dev, "1a", "08",
         f"{pc << 6 | page:02x}", "00", "fc", "00"])
    d = f.read_bytes()
    assert d[3] == 0 and d[4] & 0x3f == page, d.hex()
    return d[4:4 + 2 + d[5]], d[2]


def test_linux_cache_type_switch_sets_and_clears_wce(luns, tmp_path):
    sd, _ = luns
    f = cache_type(sd)
    assert f.read_text().strip() == "write through"
    page, _ = mode_sense(sd, 8, 1, tmp_path)        # changeable
    assert page[2] == 0x04, page.hex()
    f.write_text("write back")
    assert f.read_text().strip() == "write back"
    page, _ = mode_sense(sd, 8, 0, tmp_path)
    assert page[2] & 0x04, page.hex()
    page, _ = mode_sense(sd, 8, 2, tmp_path)        # default: as configured
    assert not page[2] & 0x04, page.hex()
    f.write_text("write through")
    assert f.read_text().strip() == "write through"
    page, _ = mode_sense(sd, 8, 0, tmp_path)
    assert not page[2] & 0x04, page.hex()


def test_wce_cannot_change_on_a_read_only_lun(luns, tmp_path):
    _, ro = luns
    caching = bytearray(20)
    caching[0:3] = b"\x08\x12\x04"
    rc, out = mode_select(ro, bytes(caching), tmp_path)
    assert rc != 0 and "invalid field in parameter list" in out.lower(), out


def test_swp_write_protects_until_cleared(luns, tmp_path):
    sd, _ = luns
    swp = bytearray(CONTROL)
    swp[4] = 0x08
    rc, out = mode_select(sd, bytes(swp), tmp_path)
    assert rc == 0, out
    assert mode_sense(sd, 0x0a, 0, tmp_path)[1] & 0x80      # WP
    cp = run(["sg_raw", "-R", "-v", "-s", "512", "-i", "/dev/zero", sd,
              "2a", "00", "00", "00", "00", "00", "00", "00", "01", "00"],
             check=False)
    out = (cp.stdout + cp.stderr).lower()
    assert cp.returncode != 0 and "data protect" in out and \
        "software write protected" in out, out
    rc, out = mode_select(sd, CONTROL, tmp_path)
    assert rc == 0, out
    cp = run(["sg_raw", "-R", "-s", "512", "-i", "/dev/zero", sd,
              "2a", "00", "00", "00", "00", "00", "00", "00", "01", "00"],
             check=False)
    assert cp.returncode == 0, cp.stdout + cp.stderr


def test_d_sense_switches_to_descriptor_format(luns, tmp_path):
    sd, _ = luns
    desc = bytearray(CONTROL)
    desc[2] |= 0x04
    rc, out = mode_select(sd, bytes(desc), tmp_path)
    assert rc == 0, out
    try:
        # A CDB bit IET does not look at: refused, now in descriptor format
        # with its field pointer in a sense-key specific descriptor.
        cp = run(["sg_raw", "-R", "-v", sd, "28", "04", "00", "00", "00", "00",
                  "00", "00", "01", "00"], check=False)
        out = cp.stdout + cp.stderr
        assert "Descriptor format" in out and "byte 1 bit 2" in out, out
    finally:
        mode_select(sd, CONTROL, tmp_path)
    cp = run(["sg_raw", "-R", "-v", sd, "28", "04", "00", "00", "00", "00",
              "00", "00", "01", "00"], check=False)
    assert "Fixed format" in cp.stdout + cp.stderr


def test_tas_is_on_by_default_and_an_initiator_may_clear_it(luns, tmp_path):
    sd, _ = luns
    for pc in (0, 1, 2):                # current, changeable, default
        page, _ = mode_sense(sd, 0x0a, pc, tmp_path)
        assert page[5] & 0x40, f"PC {pc}: {page.hex()}"
    no_tas = bytearray(CONTROL)
    no_tas[5] = 0
    rc, out = mode_select(sd, bytes(no_tas), tmp_path)
    assert rc == 0, out
    try:
        assert mode_sense(sd, 0x0a, 0, tmp_path)[0] == bytes(no_tas)
        assert mode_sense(sd, 0x0a, 2, tmp_path)[0][5] & 0x40
    finally:
        mode_select(sd, CONTROL, tmp_path)
    assert mode_sense(sd, 0x0a, 0, tmp_path)[0] == CONTROL


def test_what_cannot_change_is_refused_and_pointed_at(luns, tmp_path):
    sd, _ = luns
    qam = bytearray(CONTROL)
    qam[3] = 0x00                       # QUEUE ALGORITHM MODIFIER
    rc, out = mode_select(sd, bytes(qam), tmp_path)
    assert rc != 0 and "invalid field in parameter list" in out.lower(), out
    assert "byte 7" in out, out         # 4 bytes of header, then byte 3
    rc, out = mode_select(sd, CONTROL, tmp_path, cdb1=0x00)     # PF=0
    assert rc != 0 and "invalid field in cdb" in out.lower(), out
    rc, out = mode_select(sd, CONTROL, tmp_path, cdb1=0x11)     # SP=1
    assert rc != 0 and "invalid field in cdb" in out.lower(), out
    rc, out = mode_select(sd, bytes([0x30, 0x02, 0, 0]), tmp_path)
    assert rc != 0 and "invalid field in parameter list" in out.lower(), out


def test_a_write_through_lun_lets_no_initiator_change_its_mode_pages(
        ietd, backing, initiator, tmp_path):
    name = iqn("modeselect-wt")
    ietd(Target(name, [Lun(0, str(backing("ms-wt", 16 * MiB))),
                       Lun(1, str(backing("ms-wb", 16 * MiB)),
                           params={"IOMode": "wb"}),
                       Lun(2, str(backing("ms-wb-no", 16 * MiB)),
                           params={"IOMode": "wb", "ModeSelect": "No"})]))
    s = initiator.login(name)
    wt, wb, wb_no = s.disk(0), s.disk(1), s.disk(2)

    for sd in (wt, wb_no):
        # Nothing changeable, on either page.
        assert mode_sense(sd, 8, 1, tmp_path)[0][2:] == bytes(18)
        assert mode_sense(sd, 0x0a, 1, tmp_path)[0][2:] == bytes(10)
        # Not the write cache (Linux's switch fails, nothing changes) ...
        f = cache_type(sd)
        before = f.read_text()
        with pytest.raises(OSError):
            f.write_text("write through" if "back" in before else "write back")
        assert f.read_text() == before
        # ... nor software write protection for every initiator.
        swp = bytearray(CONTROL)
        swp[4] = 0x08
        rc, out = mode_select(sd, bytes(swp), tmp_path)
        assert rc != 0 and "invalid field in parameter list" in out.lower(), out
        assert not mode_sense(sd, 0x0a, 0, tmp_path)[1] & 0x80     # no WP
        # What is as it is may be sent back as it is.
        rc, out = mode_select(sd, CONTROL, tmp_path)
        assert rc == 0, out
    assert cache_type(wt).read_text().strip() == "write through"
    assert cache_type(wb_no).read_text().strip() == "write back"

    # A write-back LUN lets them, as before.
    assert mode_sense(wb, 8, 1, tmp_path)[0][2] == 0x04
    f = cache_type(wb)
    f.write_text("write through")
    assert f.read_text().strip() == "write through"

    shown = [dict(line.split("=", 1) for line in
                  ietadm("--op", "show", "--tid=1", f"--lun={lun}").stdout.split())
             for lun in (0, 1, 2)]
    assert [x["ModeSelect"] for x in shown] == ["No", "Yes", "No"], shown
