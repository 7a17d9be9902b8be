# SPDX-License-Identifier: GPL-2.0
"""Data integrity under fio: every block written reads back the same
(verify=crc32c, verify_fatal=1, O_DIRECT), on each backend with digests
off, and on the page cache and nullio with them on. One login per case runs
the whole matrix -- 4k and 128k, sequential and random, QD1 and QD32 --
each combination in its own 8 MiB region."""

from pathlib import Path

import pytest

from vmlib import fio
from vmlib.target import Lun, Target, iqn
from vmlib.util import MiB

REGION = 8 * MiB
SIZE = fio.needed_size(fio.MATRIX, REGION)          # 64 MiB
BOTH_DIGESTS = {"HeaderDigest": "None,CRC32C", "DataDigest": "None,CRC32C"}
# nullio stores nothing: mixed reads and writes, checked for errors only.
NULLIO_MATRIX = [fio.Combo(c.bs, {"write": "rw", "randwrite": "randrw"}[c.rw], c.iodepth)
                 for c in fio.MATRIX]


def lun_for(backend, request, backing):
    if backend == "fileio-file":
        return Lun(0, str(backing("fio", SIZE)))
    if backend in ("fileio-brd", "blockio-brd"):
        brd = request.getfixturevalue("brd")
        assert brd.size >= SIZE
        return Lun(0, brd.dev, type=backend.split("-")[0])
    assert backend == "nullio"
    return Lun(0, type="nullio", params={"Blocks": SIZE // 512})


# The short suite (other kernels) keeps one case per kernel path: the page
# cache with digests, and the block layer through fileio and blockio.
SHORT = {("fileio-file", "crc32c"), ("fileio-brd", "none"), ("blockio-brd", "none")}
# Digests are the connection's, whatever the backend: they are checked on
# the page cache and on nullio (the network path alone), not on each backend.
# The debug kernel's suite verifies with fio in test_big_writes.py, where
# writes wait for memory, and leaves this matrix to the other kernels.
# blockio's bios (their flags, REQ_NOWAIT from the read thread, and how
# the device is opened) differ from kernel to kernel: that case runs on
# every kernel (pytest -m paths).
PATHS = {("blockio-brd", "none")}
CASES = [pytest.param(b, d, id=f"{b}-{d}",
                      marks=([pytest.mark.short] if (b, d) in SHORT else []) +
                            ([pytest.mark.paths] if (b, d) in PATHS else []))
         for b, digests in [("fileio-file", ["none", "crc32c"]), ("fileio-brd", ["none"]),
                            ("blockio-brd", ["none"]), ("nullio", ["none", "crc32c"])]
         for d in digests]


@pytest.mark.parametrize("backend, digests", CASES)
def test_fio_matrix_completes_without_errors(request, ietd, backing, initiator, backend, digests):
    name = iqn(f"fio-{backend}-{digests}")
    ietd(Target(name, [lun_for(backend, request, backing)], params=BOTH_DIGESTS))
    d = "CRC32C" if digests == "crc32c" else None
    disk = initiator.login(name, header_digest=d, data_digest=d).disk(0)

    verify = backend != "nullio"
    combos = fio.MATRIX if verify else NULLIO_MATRIX
    result = fio.run_fio(fio.job_file(disk, combos, REGION, verify=verify), request.node.name)

    result.assert_clean(combos)


def test_fio_matrix_with_only_the_write_thread_sending(request, ietd, backing, initiator):
    """inline_send=N (the write thread sends every status, no read or I/O
    thread does) is a supported setting: the same matrix verifies."""
    param = Path("/sys/module/iscsi_trgt/parameters/inline_send")
    name = iqn("fio-writer-sends")
    ietd(Target(name, [lun_for("fileio-file", request, backing)]))
    assert param.read_text().strip() == "Y", "inline_send is on by default"
    param.write_text("N\n")
    try:
        disk = initiator.login(name).disk(0)
        result = fio.run_fio(fio.job_file(disk, fio.MATRIX, REGION, verify=True),
                             request.node.name)
        result.assert_clean(fio.MATRIX)
    finally:
        param.write_text("Y\n")
