# SPDX-License-Identifier: GPL-2.0
"""initiators.allow, initiators.deny and targets.allow, read at every login:
a rule by initiator name and one by network admit the right initiator and
refuse another; targets.allow hides a target on a portal, in discovery and
at login. "Another initiator" is libiscsi's iscsi-ls with its own name, or
open-iscsi coming from a second local address."""

from ietlib import OTHER_IP, access_dir, daemon, discover, login_fails, other_ip  # noqa: F401
from vmlib import proc
from vmlib.target import iqn
from vmlib.util import run

OTHER_INITIATOR = "iqn.2024-01.com.example.iet:someone-else"


def config(*names):
    return "".join(f"Target {n}\n\tLun 0 Type=nullio,Blocks=65536\n" for n in names)


def ls_as(initiator_name, portal="127.0.0.1"):
    """Targets iscsi-ls (another initiator) can discover and log in to."""
    cp = run(["iscsi-ls", "-s", "-i", initiator_name, f"iscsi://{portal}"], check=False, timeout=60)
    return cp


def libiscsi_login_works(initiator_name, name, portal="127.0.0.1"):
    cp = run(["iscsi-inq", "-i", initiator_name, f"iscsi://{portal}/{name}/0"], check=False,
             timeout=60)
    return cp.returncode == 0


def test_allow_by_initiator_name_admits_it_and_refuses_another(daemon, access_dir, initiator):
    name = iqn("allow-by-name")
    d = daemon(config(name), args=["--access-dir", str(access_dir)])
    (access_dir / "initiators.allow").write_text(f"{name} {initiator.name}\n")

    initiator.login(name)
    assert len(proc.sessions_of(name)) == 1
    assert not libiscsi_login_works(OTHER_INITIATOR, name)
    assert f"access to {name} refused by {access_dir}/initiators.allow" in d.log_text()
    # Discovery hides what the other initiator may not use.
    assert name not in ls_as(OTHER_INITIATOR).stdout


def test_files_are_read_at_every_login(daemon, access_dir, iscsid, initiator):
    name = iqn("allow-reread")
    daemon(config(name), args=["--access-dir", str(access_dir)])
    allow = access_dir / "initiators.allow"
    allow.write_text(f"{name} {OTHER_INITIATOR}\n")
    login_fails(name)
    allow.write_text(f"{name} iqn.2024-01.com.example.iet:.*\n")
    initiator.login(name)
    # An empty allow file closes everything.
    initiator.logout(name)
    allow.write_text("")
    login_fails(name)


def test_allow_by_network_admits_one_address_and_refuses_another(daemon, access_dir, other_ip,
                                                                  initiator):
    name = iqn("allow-by-net")
    daemon(config(name), args=["--access-dir", str(access_dir)])
    (access_dir / "initiators.allow").write_text(f"{name} 127.0.0.0/8\n")

    # Through the second address the initiator's source address is that one.
    login_fails(name, portal=f"{OTHER_IP}:3260")
    initiator.login(name)
    assert proc.sessions_of(name)[0].conns[0].ip == "127.0.0.1"


def test_deny_refuses_unless_allow_admits(daemon, access_dir, initiator):
    """The cluster agents' pair: '<target> ALL' denied, the chosen allowed."""
    name = iqn("deny-all")
    daemon(config(name), args=["--access-dir", str(access_dir)])
    (access_dir / "initiators.deny").write_text(f"{name} ALL\n")
    assert not libiscsi_login_works(OTHER_INITIATOR, name)
    login_fails(name)
    (access_dir / "initiators.allow").write_text(f"{name} {initiator.name}\n")
    initiator.login(name)
    assert not libiscsi_login_works(OTHER_INITIATOR, name)


def test_targets_allow_hides_a_target_on_a_portal(daemon, access_dir, other_ip, initiator):
    shown, hidden = iqn("portal-shown"), iqn("portal-hidden")
    d = daemon(config(shown, hidden), args=["--access-dir", str(access_dir)])
    (access_dir / "targets.allow").write_text(f"{hidden} {OTHER_IP}\nALL ALL\n")

    rc, found = discover("127.0.0.1:3260")
    assert rc == 0 and found == [shown]
    rc, found = discover(f"{OTHER_IP}:3260")
    assert rc == 0 and sorted(found) == sorted([shown, hidden])
    login_fails(hidden, portal="127.0.0.1:3260")
    assert "is not offered on this portal" in d.log_text()
    initiator.login(hidden, portal=f"{OTHER_IP}:3260")
    assert len(proc.sessions_of(hidden)) == 1


def test_a_broken_access_file_refuses_rather_than_opens(daemon, access_dir, iscsid):
    name = iqn("broken-file")
    d = daemon(config(name), args=["--access-dir", str(access_dir)])
    (access_dir / "initiators.deny").write_text(f"{name} 10.0.0.300/8\n")
    login_fails(name)
    assert "initiators.deny:1:" in d.log_text()
