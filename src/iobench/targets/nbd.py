"""An NBD export (nbdkit, qemu-nbd, rbd-nbd ...), named by its URI: fio's ``nbd`` engine
(libnbd) reaches it through the network, no kernel module needed. Writing needs
--destructive, as for a block device; an export that the server says is read-only is
refused before fio starts (docs/targets.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from iobench.errors import TargetUnsafe
from iobench.model import Target
from iobench.probe.addresses import served_here
from iobench.probe.host import run_json
from iobench.probe.nbd import NbdExport, parse_nbd_uri, probe_nbd
from iobench.probe.written import Unwritten, unwritten_of_extents
from iobench.targets.checks import check_destructive, in_place
from iobench.targets.kind import Named, OverTheNetwork, Plan, Preparation, Reach
from iobench.targets.lines import WRITES, Lines, join, mapping, served_here_line, size

SCHEMES = ("nbd://", "nbds://", "nbd+unix://", "nbds+unix://")


class Nbd(OverTheNetwork):
    name = "nbd"
    noun = "NBD export"
    accepts = (
        "an NBD export (nbd://HOST[:PORT]/EXPORT, nbds://... or nbd+unix:///EXPORT?socket=PATH)"
    )
    loss = "OVERWRITES THE EXPORT'S DATA"
    engine: str | None = "nbd"
    endpoint_options = frozenset({"uri"})

    def claims(self, named: Named) -> bool:
        return named.spec.lower().startswith(SCHEMES)

    def resolve(self, named: Named) -> Target:
        uri = parse_nbd_uri(named.spec)
        export = probe_nbd(uri)  # unreachable, no such export: said now, exit 2
        # fio reaches ``uri.uri`` (with a TLS user name, which is no secret); shown without
        return Target(uri.shown, uri.uri, self.name, export.size_bytes, facts=export)

    def _export(self, target: Target) -> NbdExport:
        """What the server said when the target was resolved."""
        if isinstance(target.facts, NbdExport):
            return target.facts
        return probe_nbd(parse_nbd_uri(target.path))

    def check(self, target: Target, plan: Plan) -> None:
        check_destructive(target, plan, "an NBD export")
        readonly = self._export(target).readonly
        if plan.writes and readonly is not False:
            said = "says the export is read-only" if readonly else "did not say it is writable"
            raise TargetUnsafe(
                f"the server of {target.spec} {said}, and the {plan.suite.name} suite writes "
                f"to it ({plan.writers})",
                "run a suite that only reads, or export it writable",
            )

    def prepare(self, target: Target, plan: Plan) -> Preparation:
        return in_place(target, plan)

    def reach(self, target: Target, filename: str) -> Reach:
        return Reach(shown=target.spec, engine=self.engine, options=(("uri", target.path),))

    def reach_from(self, target: Target, filename: str) -> Reach:
        return self.reach(target, filename)

    def capture(self, target: Target) -> dict[str, Any]:
        uri = self._export(target).uri
        here = served_here([uri.host]) if uri.host else "a unix socket of this host"
        return {"nbd": self._export(target).context(), "served_here": here}

    def unwritten(self, target: Target, filename: str, area: int) -> Unwritten | None:
        """What the server's block status (``base:allocation``) lists as holes."""
        export = self._export(target)
        if "base:allocation" not in export.contexts:
            return None  # the server cannot say
        extents = run_json(["nbdinfo", "--map", "--json", export.uri.uri], timeout_s=10)
        if not isinstance(extents, list) or not extents:
            return None  # no answer, or not nbdinfo's
        written = [
            (e.get("offset"), e.get("length"))
            for e in extents
            if isinstance(e, dict) and isinstance(e.get("type"), int) and not e["type"] & 1
        ]
        return unwritten_of_extents(written, area)

    def describe(self, ctx: Mapping[str, Any], *, identity: bool) -> Lines:
        """What the server said of its export (docs/context.md, ``nbd``)."""
        lines = _nbd_lines(mapping(ctx.get("nbd")), identity) + served_here_line(ctx, identity)
        if not identity:
            lines.append((WRITES, "when the NBD server answers (over the network)"))
        return lines


def _nbd_lines(nbd: Mapping[str, Any], identity: bool) -> list[tuple[str, str]]:
    if not nbd:
        return []
    flags = mapping(nbd.get("flags"))
    can = [
        name.removeprefix("can_").replace("_", "-")
        for name, on in flags.items()
        if on is True and name.startswith("can_")
    ]
    rotational = flags.get("is_rotational")
    sizes = mapping(nbd.get("block_size"))
    readonly = nbd.get("readonly")
    export = nbd.get("export")
    lines = [
        (
            "nbd export",
            join(
                identity and export is not None and f"name {export!r}",
                size(nbd.get("size_bytes")),
                isinstance(readonly, bool) and ("read-only" if readonly else "writable"),
                nbd.get("transport"),
                nbd.get("tls") is True and "TLS",
                nbd.get("protocol"),
            ),
        ),
        (
            "nbd can",
            join(
                *can,
                None if rotational is None else ("rotational" if rotational else "non-rotational"),
            ),
        ),
    ]
    if any(isinstance(v, int) for v in sizes.values()):
        lines.append(
            (
                "nbd block sizes",
                join(*(f"{k} {size(v)}" for k, v in sizes.items() if size(v))),
            )
        )
    if identity and isinstance(nbd.get("description"), str):
        lines.append(("nbd description", nbd["description"]))
    return lines


NBD = Nbd()
