# SPDX-License-Identifier: GPL-2.0
"""CHAP with open-iscsi: one-way and mutual, for each algorithm open-iscsi
offers (node.session.auth.chap_algs), right secrets admitted and wrong ones
refused; discovery guarded by the global accounts."""

from ietlib import ALGORITHMS, chap, daemon, discover, discovery_chap, login_fails  # noqa: F401
from vmlib import proc
from vmlib.target import iqn

# How ietd's log names open-iscsi's algorithms.
OUR_NAMES = {"MD5": "MD5", "SHA1": "SHA-1", "SHA256": "SHA-256", "SHA3-256": "SHA3-256"}
IN_SECRET = "initiator-secret-1"
OUT_SECRET = "target-secret-22"


def config(name):
    return (f"Target {name}\n"
            f"\tIncomingUser joe {IN_SECRET}\n"
            f"\tOutgoingUser tgt {OUT_SECRET}\n"
            f"\tLun 0 Type=nullio,Blocks=65536\n")


def per_algorithm(kind):
    """A target per algorithm, so each has its own node record."""
    return {alg: iqn(f"chap-{kind}-{alg.lower()}") for alg in ALGORITHMS}


def test_chap_one_way_admits_the_right_secret_and_refuses_a_wrong_one(daemon, initiator):
    names = per_algorithm("one-way")
    d = daemon("".join(config(n) for n in names.values()))

    for tid, (alg, name) in enumerate(names.items(), 1):
        login_fails(name, settings=chap("joe", "wrong-secret-999", alg))
        assert "wrong CHAP response for user joe" in d.log_text()
        login_fails(name, settings=chap("nobody-here", IN_SECRET, alg))

        initiator.login(name, settings=chap("joe", IN_SECRET, alg))
        assert len(proc.sessions_of(name)) == 1, alg
        d.wait_log(rf"logged in to tid {tid}\b.*CHAP {OUR_NAMES[alg]} user joe")
    # No secret in the log, whatever happened.
    assert IN_SECRET not in d.log_text() and "wrong-secret-999" not in d.log_text()


def test_chap_mutual_authenticates_both_ways(daemon, initiator):
    names = per_algorithm("mutual")
    d = daemon("".join(config(n) for n in names.values()))

    for tid, (alg, name) in enumerate(names.items(), 1):
        # The target proves itself with OutgoingUser; a wrong expectation on
        # the initiator's side makes the initiator give up.
        login_fails(name, settings=chap("joe", IN_SECRET, alg, "tgt", "not-the-target-secret"))
        login_fails(name, settings=chap("joe", "wrong-secret-999", alg, "tgt", OUT_SECRET))

        initiator.login(name, settings=chap("joe", IN_SECRET, alg, "tgt", OUT_SECRET))
        assert len(proc.sessions_of(name)) == 1, alg
        d.wait_log(rf"logged in to tid {tid}\b.*CHAP {OUR_NAMES[alg]} user joe, mutual")
    assert OUT_SECRET not in d.log_text()


def test_chap_required_refuses_an_initiator_without_chap(daemon, iscsid):
    name = iqn("chap-required")
    d = daemon(config(name))
    cp = login_fails(name)
    assert cp.returncode == 24, cp.stderr     # authentication failure
    assert "requires CHAP" in d.log_text()


def test_discovery_chap_guards_sendtargets(daemon, iscsid):
    name = iqn("chap-discovery")
    daemon(f"IncomingUser disc {IN_SECRET}\n" + config(name))

    rc, found = discover(settings=discovery_chap("disc", IN_SECRET))
    assert rc == 0 and found == [name]
    rc, found = discover(settings=discovery_chap("disc", "wrong-secret-999"))
    assert rc != 0 and found == []
    rc, found = discover()
    assert rc != 0 and found == []


def test_discovery_without_global_accounts_needs_no_chap(daemon, iscsid):
    name = iqn("chap-discovery-open")
    daemon(config(name))
    rc, found = discover()
    assert rc == 0 and found == [name]
