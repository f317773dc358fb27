"""Provider specs: what a cloud volume is promised to deliver (docs/specs.md).

``providers.toml`` holds each provider's published figures with their sources. A spec is
resolved for one volume (its size, the host's vCPUs, figures the user provisioned) into a
:class:`Promise`: IOPS, bandwidth, the IO size the provider counts as one IO, a burst
model, a stated latency. Against a workload's block size the volume delivers whichever
limit it reaches first (``expected``): that is the "promised" figure a run is compared
with, and ``--spec`` turns it into expectations. Pure, except for reading the data file.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from iobench import units
from iobench.errors import UserError
from iobench.model import Expectation, Suite
from iobench.units import (
    format_bytes,
    format_iops,
    format_ns,
    format_rate,
    format_rate_decimal,
    parse_size,
    rounded_down,
)

# A spec's expectation passes at this share of the promised figure.
SPEC_TOLERANCE = 0.9
# Providers' IOPS and bandwidth figures assume deep queues; below this many outstanding IOs
# (iodepth x numjobs) a workload is latency-bound and is not held to them.
SPEC_MIN_OUTSTANDING = 16
DOCS = "docs/specs.md"

GiB = float(1 << 30)


def parse_rate(value: str | int | float, where: str) -> float:
    """``200MB/s`` -> 2e8, ``125MiB/s`` -> 131072000.0 (bytes a second)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    try:
        return units.parse_rate(str(value))
    except ValueError as e:
        raise UserError(f"{where}: {e}") from e


def _count(value: str | int | float, where: str) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    try:
        return units.parse_count(str(value))
    except ValueError:
        raise UserError(f"{where}: {value!r} is not a number such as 6000 or 6k") from None


# -- the data ------------------------------------------------------------------------------------


@cache
def _data() -> dict[str, Any]:
    text = resources.files("iobench.specs").joinpath("providers.toml").read_text()
    return tomllib.loads(text)


def spec_names() -> list[str]:
    return sorted(_data())


def spec_data(name: str) -> dict[str, Any]:
    data = _data()
    if name not in data:
        raise UserError(
            f"--spec {name}: no such provider spec",
            f"specs: {', '.join(spec_names())} (`iobench specs` lists them with their sources)",
        )
    return dict(data[name])


def published_units(data: Mapping[str, Any]) -> str:
    """``"decimal"`` when every rate a spec writes is in decimal units (``150MB/s``), else
    ``"binary"``. (No spec mixes the two: tests/test_specs.py checks it.)"""
    kinds = {units.rate_is_decimal(text) for text in _strings(data)} - {None}
    return "decimal" if kinds == {True} else "binary"


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list | tuple):
        return [s for v in value for s in _strings(v)]
    return []


def rate_text(bytes_per_s: float, rate_units: str | None) -> str:
    """Bandwidth as every screen shows it (binary units), followed by the provider's own
    decimal figure in brackets when it publishes in decimal units: ``143 MiB/s (150 MB/s)``."""
    text = format_rate(bytes_per_s)
    if rate_units == "decimal":
        text += f" ({format_rate_decimal(bytes_per_s)})"
    return text


# -- resolving a spec for one volume ---------------------------------------------------------------


@dataclass(frozen=True)
class Burst:
    iops: float | None  # the burst level, when above the baseline
    bw_bytes: float | None
    seconds: float | None  # how long a full bucket (or a burst) lasts at the burst rate
    credits: float | None  # gp2-style I/O credit bucket
    note: str


@dataclass(frozen=True)
class Promise:
    spec: str
    title: str
    sources: tuple[str, ...]
    note: str
    params: dict[str, str]  # resolved, as shown: {"size": "100 GiB", "iops": "3000"}
    iops: float
    bw_bytes: float
    io_unit: int | None  # an IO of up to this many bytes counts as one
    latency_mean_ns: float | None
    burst: Burst | None
    basis: tuple[str, ...] = field(default=())  # how the figures were reached
    # The units the provider publishes its bandwidth in: "decimal" (MB/s) or "binary"
    # (MiB/s). iobench shows bandwidth in binary units; a decimal promise is quoted in
    # brackets beside it (docs/specs.md, "Units").
    rate_units: str = "binary"

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["sources"] = list(self.sources)
        d["basis"] = list(self.basis)
        return d


@dataclass(frozen=True)
class Volume:
    """What iobench knows of the volume and host when no parameter says otherwise."""

    device_bytes: int | None
    vcpus: int | None


# Defaults taken from the volume and host: (parameter, value) -> (what it is, its value
# here or None, an example to give instead).
_FROM_VOLUME: dict[tuple[str, str], Callable[[Volume], tuple[str, float | None, str]]] = {
    ("size", "device"): lambda v: ("the volume's size", v.device_bytes, "500G"),
    ("vcpus", "host"): lambda v: ("the number of vCPUs", v.vcpus, "8"),
}


def _param_values(
    data: Mapping[str, Any], given: Mapping[str, str], volume: Volume, name: str
) -> dict[str, Any]:
    """Every declared parameter's value: given, or its default; each checked."""
    declared: Mapping[str, Any] = data.get("params", {})
    unknown = sorted(set(given) - set(declared))
    if unknown:
        raise UserError(
            f"--spec-param {unknown[0]}: {name} has no such parameter",
            f"its parameters: {', '.join(declared) or 'none'}",
        )
    out: dict[str, Any] = {}
    for key, decl in declared.items():
        where = f"--spec-param {key}"
        raw = given.get(key, decl.get("default"))
        if raw is None:
            raise UserError(
                f"--spec {name} needs --spec-param {key}=...: {decl.get('help', key)}",
                f"e.g. --spec {name} --spec-param {key}=...",
            )
        if "choices" in decl:
            if raw not in decl["choices"]:
                raise UserError(
                    f"{where}={raw}: one of {', '.join(decl['choices'])}", decl.get("help")
                )
            out[key] = raw
        elif (key, raw) in _FROM_VOLUME:
            what, known, example = _FROM_VOLUME[key, raw](volume)
            if not known:
                raise UserError(
                    f"--spec {name}: {what} is not known here",
                    f"give it: --spec-param {key}={example}",
                )
            out[key] = float(known)
        elif key == "size":
            if str(raw).strip().isdigit():
                raise UserError(
                    f"{where}={raw}: a size needs its unit (a bare number would be bytes)",
                    f"e.g. {key}={raw}G for {raw} GiB",
                )
            try:
                out[key] = float(parse_size(str(raw)))
            except ValueError as e:
                raise UserError(f"{where}: {e}") from e
        elif key == "throughput":
            out[key] = parse_rate(raw, where)
        else:
            out[key] = _count(raw, where)
        _check_range(out, key, decl, where)
    for key, decl in declared.items():  # limits that relate two parameters
        if "per_gib_max" in decl and "size" in out:
            # The baseline (the minimum) holds at any size; more is allowed per GiB.
            most = max(
                float(decl["per_gib_max"]) * out["size"] / GiB, _count(decl.get("min", 0), key)
            )
            if out[key] > most:
                raise UserError(
                    f"{where_of(key)}: {format_iops(out[key])} IOPS is more than {name} allows "
                    f"for {format_bytes(out['size'])} ({decl['per_gib_max']} per GiB: "
                    f"{format_iops(most)})",
                    "a larger volume, or fewer IOPS",
                )
        if "per_iops_max" in decl and "iops" in out:
            most = max(
                parse_rate(decl["per_iops_max"], key) * out["iops"],
                parse_rate(decl.get("min", 0), key),
            )
            if out[key] > most:
                raise UserError(
                    f"{where_of(key)}: {format_rate(out[key])} is more than {name} allows for "
                    f"{format_iops(out['iops'])} IOPS ({decl['per_iops_max']} per IOPS: "
                    f"{format_rate(most)})",
                    "provision more IOPS, or less throughput",
                )
    return out


def where_of(key: str) -> str:
    return f"--spec-param {key}"


def _check_range(values: dict[str, Any], key: str, decl: Mapping[str, Any], where: str) -> None:
    parse = parse_rate if key == "throughput" else _count
    for bound in ("min", "max"):
        if bound not in decl:
            continue
        limit = parse(decl[bound], where)
        if (values[key] < limit) if bound == "min" else (values[key] > limit):
            low = bound == "min"
            raise UserError(
                f"{where}: {_show(key, values[key])} is {'below' if low else 'above'} the "
                f"{bound}imum of {_show(key, limit)} ({decl.get('help', key)})",
                f"give {'at least' if low else 'at most'} {_show(key, limit)}",
            )


def _linear(formula: Mapping[str, Any], values: Mapping[str, Any], rate: bool) -> float | None:
    """base + per_gib x size (+ per_iops x iops), clamped by min/max; or a parameter."""
    if not formula:
        return None

    def conv(v: str | int | float) -> float:
        return parse_rate(v, "spec") if rate else _count(v, "spec")

    if "param" in formula:
        value = float(values[formula["param"]])
    else:
        value = conv(formula.get("base", 0))
        if "per_gib" in formula:
            value += conv(formula["per_gib"]) * values["size"] / GiB
        if "per_iops" in formula:
            value += conv(formula["per_iops"]) * values["iops"]
    if "min" in formula:
        value = max(value, conv(formula["min"]))
    if "max" in formula:
        value = min(value, conv(formula["max"]))
    return value


def resolve(name: str, given: Mapping[str, str], volume: Volume) -> Promise:
    """The promise of spec ``name`` for one volume; UserError for a bad parameter."""
    data = spec_data(name)
    values = _param_values(data, given, volume, name)
    rate_units = published_units(data)
    section: dict[str, Any] = dict(data)
    for value in values.values():
        if isinstance(value, str) and "choice" in data:
            section.update(data["choice"][value])
    basis: list[str] = []
    iops = _linear(section.get("iops", {}), values, rate=False)
    bw = _linear(section.get("bw", {}), values, rate=True)
    burst_iops = burst_bw = None
    if "tiers" in section:
        size_gib = values["size"] / GiB
        tier = next((t for t in section["tiers"] if size_gib <= t["gib"] + 1e-9), None)
        if tier is None:
            raise UserError(
                f"--spec {name}: {format_bytes(values['size'])} is larger than its largest "
                f"tier ({section['tiers'][-1]['gib']} GiB)",
                "check the size (--spec-param size=... if the device's is not the volume's), "
                "or choose the spec of the volume type you have: iobench specs",
            )
        if "iops" in tier:
            iops = float(tier["iops"])
        if "bw" in tier:
            bw = parse_rate(tier["bw"], name)
        burst_iops = tier.get("burst_iops")
        burst_bw = parse_rate(tier["burst_bw"], name) if "burst_bw" in tier else None
        basis.append(f"tier {tier.get('name', str(tier['gib']) + ' GiB')}")
    if "vcpu_caps" in section:
        rows = [r for r in section["vcpu_caps"] if r["vcpus"] <= values["vcpus"]]
        row = rows[-1] if rows else section["vcpu_caps"][0]
        cap_iops, cap_bw = float(row["iops"]), parse_rate(row["bw"], name)
        if iops is not None and cap_iops < iops:
            basis.append(f"IOPS capped at {format_iops(cap_iops)} by {values['vcpus']:g} vCPUs")
            iops = cap_iops
        if bw is not None and cap_bw < bw:
            basis.append(
                f"bandwidth capped at {rate_text(cap_bw, rate_units)} by {values['vcpus']:g} vCPUs"
            )
            bw = cap_bw
    if iops is None or bw is None:
        raise ValueError(f"spec {name} gives no IOPS or no bandwidth")
    burst = _burst(section, values, iops, burst_iops, burst_bw)
    io_unit = parse_size(section["io_unit"]) if "io_unit" in section else None
    latency = section.get("latency_mean")
    shown = {k: _show(k, v) for k, v in values.items()}
    return Promise(
        spec=name,
        title=str(data["title"]),
        sources=tuple(data.get("sources", ())),
        note=str(data.get("note", "")),
        params=shown,
        iops=iops,
        bw_bytes=bw,
        io_unit=io_unit,
        latency_mean_ns=units.parse_latency_ns(latency) if latency else None,
        burst=burst,
        basis=tuple(basis),
        rate_units=rate_units,
    )


def _burst(
    section: Mapping[str, Any],
    values: Mapping[str, Any],
    iops: float,
    tier_iops: float | None,
    tier_bw: float | None,
) -> Burst | None:
    b: Mapping[str, Any] = section.get("burst", {})
    if not b and tier_iops is None and tier_bw is None:
        return None
    if "below_gib" in b and values["size"] / GiB >= b["below_gib"]:
        b = {}  # large enough that its baseline is its burst
    burst_iops = float(b["iops"]) if "iops" in b else tier_iops
    burst_bw = parse_rate(b["bw"], "burst") if "bw" in b else tier_bw
    if burst_iops is not None and burst_iops <= iops:
        burst_iops = None
    if burst_iops is None and burst_bw is None:
        return None
    credits = float(b["credits"]) if "credits" in b else None
    seconds = float(b["seconds"]) if "seconds" in b else None
    if credits and burst_iops:
        seconds = credits / (burst_iops - iops)
    note = str(b.get("note") or section.get("burst", {}).get("note") or "")
    return Burst(burst_iops, burst_bw, seconds, credits, note)


def _show(key: str, value: Any) -> str:
    if key == "size":
        return format_bytes(value)
    if key == "throughput":
        return format_rate(value)
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


# -- a promise against workloads -------------------------------------------------------------------


@dataclass(frozen=True)
class Expected:
    iops: float
    bw_bytes: float
    bound: str  # "IOPS" or "bandwidth": the limit this block size reaches first


def expected(promise: Mapping[str, Any] | Promise, bs: int) -> Expected:
    """What the volume delivers at block size ``bs``: whichever of its limits binds."""
    p = promise.as_dict() if isinstance(promise, Promise) else promise
    unit = p.get("io_unit")
    ops = math.ceil(bs / unit) if unit else 1
    by_iops = float(p["iops"]) / ops
    if by_iops * bs <= float(p["bw_bytes"]):
        return Expected(by_iops, by_iops * bs, "IOPS")
    return Expected(float(p["bw_bytes"]) / bs, float(p["bw_bytes"]), "bandwidth")


def burst_expected(promise: Mapping[str, Any] | Promise, bs: int) -> Expected | None:
    """What the volume delivers at block size ``bs`` while it bursts; None without a burst."""
    p = promise.as_dict() if isinstance(promise, Promise) else promise
    b = p.get("burst")
    if not b:
        return None
    return expected(
        {
            "io_unit": p.get("io_unit"),
            "iops": b.get("iops") or p["iops"],
            "bw_bytes": b.get("bw_bytes") or p["bw_bytes"],
        },
        bs,
    )


def burst_text(promise: Mapping[str, Any] | Promise) -> str:
    """``bursts to 3.00k IOPS for about 2,000 s (a full bucket of 5,400,000 I/O credits)``,
    or ""; a decimal provider's rate with its own figure: ``162 MiB/s (170 MB/s)``."""
    p = promise.as_dict() if isinstance(promise, Promise) else promise
    b = p.get("burst")
    if not b:
        return ""
    levels = " and ".join(
        x
        for x in (
            f"{format_iops(b['iops'])} IOPS" if b.get("iops") else "",
            rate_text(b["bw_bytes"], p.get("rate_units")) if b.get("bw_bytes") else "",
        )
        if x
    )
    text = f"bursts to {levels}"
    if b.get("seconds"):
        text += f" for about {b['seconds']:,.0f} s"
    if b.get("credits"):
        text += f" (a full bucket of {b['credits']:,.0f} I/O credits)"
    return text


def promise_text(promise: Mapping[str, Any] | Promise) -> str:
    """One line: the spec, its parameters, its baseline, latency and burst."""
    p = promise.as_dict() if isinstance(promise, Promise) else promise
    params = ", ".join(f"{k} {v}" for k, v in p["params"].items())
    text = (
        f"{p['spec']} ({p['title']}{'; ' + params if params else ''}): "
        f"{format_iops(p['iops'])} IOPS, {rate_text(p['bw_bytes'], p.get('rate_units'))}"
    )
    if p.get("latency_mean_ns"):
        text += f", average latency {format_ns(p['latency_mean_ns'])}"
    burst = burst_text(p)
    return text + (f"; {burst}" if burst else "")


def spec_expectations(promise: Promise, suite: Suite) -> list[Expectation]:
    """The promise as expectations: every workload with deep enough queues reaches
    ``SPEC_TOLERANCE`` of its promised throughput; a QD1 workload stays under a stated
    average latency. A threshold is 90 % rounded down to three significant digits in the
    units every table shows (``4.50k``, ``180MiB/s``), so its text is exactly what is
    checked and reads like the measured figure beside it."""
    source = f"spec {promise.spec}"
    out: list[Expectation] = []
    # A group of jobs run together mixes what it asks of the volume: no promise says what
    # it should reach.
    for w in (w for w in suite.workloads if not w.parts):
        outstanding = w.iodepth * w.numjobs
        if outstanding >= SPEC_MIN_OUTSTANDING:
            e = expected(promise, w.bs)
            if e.bound == "IOPS":
                shown = format_iops(rounded_down(SPEC_TOLERANCE * e.iops, 1000.0))
                text = f"{w.name}.total.iops>={shown}"
                value = units.parse_count(shown)
                out.append(Expectation(text, w.name, "total", "iops", ">=", value, source))
            else:
                shown = format_rate(rounded_down(SPEC_TOLERANCE * e.bw_bytes, 1024.0))
                shown = shown.replace(" ", "")
                text = f"{w.name}.total.bw>={shown}"
                value = units.parse_rate(shown)
                out.append(Expectation(text, w.name, "total", "bw", ">=", value, source))
        elif outstanding == 1 and promise.latency_mean_ns:
            from iobench.model import directions_of

            ms = promise.latency_mean_ns / 1e6
            for d in directions_of(w):
                text = f"{w.name}.{d}.mean<={ms:g}ms"
                out.append(
                    Expectation(text, w.name, d, "mean", "<=", promise.latency_mean_ns, source)
                )
    return out


def parse_spec_params(items: Sequence[str]) -> dict[str, str]:
    """``["iops=6000", "size=500G"]`` -> dict; a UserError for anything else."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise UserError(f"--spec-param {item!r}: not NAME=VALUE", "e.g. --spec-param iops=6000")
        if key.strip() in out:
            raise UserError(
                f"--spec-param {key.strip()} is given twice", "give each parameter once"
            )
        out[key.strip()] = value.strip()
    return out
