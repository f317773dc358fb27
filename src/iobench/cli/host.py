"""What iobench can say before any run: ``info`` (the host and a target's storage),
``specs`` (what `run` can hold a volume to), and ``clients check`` (the fio servers
`run --clients` would use). ``suites`` is in suites.py."""

from __future__ import annotations

import click

from iobench.cli.env import Environment, pass_env
from iobench.cli.execution import stop_signals_as_interrupt
from iobench.cli.options import access_options, given_access, json_option
from iobench.documents import envelope
from iobench.errors import ExitCode


@click.command()
@click.argument("target", required=False, default=".")
@access_options()
@json_option()
@pass_env
def info(env: Environment, target: str, as_json: bool) -> None:
    """Show what is under the hood: host, and TARGET's filesystem, mount and devices (for
    an NBD export or an RBD image: what the server or the cluster says of it).

    \b
    Examples:
      iobench info
      iobench info /mnt/vol --json
      iobench info /dev/nvme0n1
      iobench info rbd:rbd/bench-img --ceph-conf /etc/ceph/ceph.conf
      iobench info nbd://127.0.0.1:10809/export
    """
    from iobench.probe import probe_host
    from iobench.report.context import render_info
    from iobench.targets import kind_of, resolve_target

    resolved = resolve_target(target, given_access())
    host = probe_host()
    context = kind_of(resolved).capture(resolved)
    doc = {
        **envelope("info"),
        "host": host,
        "target": {
            "spec": resolved.spec,
            "path": resolved.path,
            "kind": resolved.kind,
            "size_bytes": resolved.size_bytes,
            "free_bytes": resolved.free_bytes,
            "context": context,
        },
    }
    if as_json:
        env.emit_json(doc)
    else:
        render_info(doc, env.stdout)


@click.command()
@json_option()
@pass_env
def specs(env: Environment, as_json: bool) -> None:
    """List the provider specs `--spec` takes: volume types, parameters and sources.

    A spec is what a provider publishes for a volume type (IOPS and bandwidth by size,
    vCPUs or provisioned figures, bursts). `run --spec NAME` checks a run against it and
    shows each workload's share of what was promised.

    \b
    Examples:
      iobench specs
      iobench specs --json
      iobench run /mnt/vol --suite volume --spec aws-gp3 --spec-param iops=6000
    """
    from iobench.report.specs import render_specs, specs_document

    doc = specs_document()
    if as_json:
        env.emit_json(doc)
    else:
        render_specs(doc, env.stdout)


@click.group()
def clients() -> None:
    """The fio servers a run can use as clients (`iobench run --clients`).

    Start `fio --server=ip:ADDRESS` on each load machine first (docs/clients.md: systemd,
    Kubernetes, and why to bind it to a private address).

    \b
    Examples:
      iobench clients check node1,node2,node3
      iobench run /mnt/shared --clients node1,node2,node3 --scale 1,2,3
    """


@clients.command(name="check")
@click.argument("names", metavar="CLIENTS")
@json_option()
@pass_env
def clients_check(env: Environment, names: str, as_json: bool) -> int:
    """Check that each client is reachable and runs jobs for this fio.

    CLIENTS is host[:port],... or @FILE (one a line, # comments). For each: a TCP connection
    within 3 s, then a job on fio's null engine (it touches no file). Exits 1 if any fails.

    \b
    Examples:
      iobench clients check node1,node2,node3
      iobench clients check @hosts.txt --json
    """
    from iobench.clients import bounded, check_clients, parse_clients
    from iobench.fio.confine import confinement
    from iobench.fio.runner import find_fio
    from iobench.report.clients import render_checks

    parsed = parse_clients(names)
    fio = find_fio()
    confined = confinement()
    with stop_signals_as_interrupt():
        checks = check_clients(parsed, fio, confined)
    confined = bounded(confined, checks)
    if as_json:
        env.emit_json(
            {
                **envelope("clients"),
                "fio_version": fio.version,
                "fio_client": confined.as_dict(),
                "clients": [c.as_dict() for c in checks],
            }
        )
    else:
        render_checks(checks, fio.version, env.stdout, confined.describe())
    return 0 if all(c.ok for c in checks) else int(ExitCode.RUN_FAILED)
