"""Units of fio's normal text output that the recorded runs do not show (fio/text.py): rates
in bits (``unit_base=1``: fio 3.33 wrote ``BW=5677Mibit/s (5953Mbit/s)(710MiB/1001msec)``
for 710 MiB in 1.001 s, num2str multiplying by 8 and writing ``bit``; unit_base=8 is
bytes), and fio 2.x's amounts up to its ``P`` (its num2str has K, M, G, P: no T, so P is
the fourth power of kb_base). Each is a recorded output with one figure written the way fio
writes it in that unit; the imported figure is what the user reads."""

from __future__ import annotations

from typing import Any

import pytest

from iobench.errors import UserError
from iobench.fio.text import parse_normal_output
from iobench.importer import interpret_fio_output
from test_import_text import RECORDED, _ucloud_first_run, normal_part

QD8 = RECORDED / "text-libaio-randread-qd8.out"  # BW=1187MiB/s (1245MB/s), kb_base 1024
SI = RECORDED / "text-kb-base-1000.out"  # BW=568MB/s (542MiB/s), kb_base=1000


def _read_bw(text: str) -> float:
    (job,) = parse_normal_output(text, "x.txt")[0].jobs
    assert job.read is not None
    return job.read.bw_bytes


@pytest.mark.parametrize(
    ("bw", "bytes_per_s"),
    [
        ("BW=1187MiB/s (1245MB/s)", 1187 * 1024**2),  # as recorded
        ("BW=9496Mibit/s (9957Mbit/s)", 9496 * 1024**2 / 8),  # the same, unit_base=1
        ("BW=9724Kibit/s (9957kbit/s)", 9724 * 1024 / 8),
        ("BW=9.27Gibit/s (9957Mbit/s)", 9.27 * 1024**3 / 8),
        ("BW=800bit/s (800bit/s)", 100),
    ],
)
def test_rates_in_bits_are_bytes_over_8(bw: str, bytes_per_s: float) -> None:
    text = normal_part(QD8)
    assert "BW=1187MiB/s (1245MB/s)" in text
    assert _read_bw(text.replace("BW=1187MiB/s (1245MB/s)", bw)) == pytest.approx(bytes_per_s)


@pytest.mark.parametrize(
    ("bw", "bytes_per_s"),
    [
        ("BW=568MB/s (542MiB/s)", 542 * 1024**2),  # as recorded: the IEC figure is taken
        ("BW=4544Mbit/s (4336Mibit/s)", 4336 * 1024**2 / 8),  # the same, unit_base=1
        ("BW=4544kbit/s (4437Kibit/s)", 4437 * 1024 / 8),
    ],
)
def test_with_kb_base_1000_the_iec_rate_in_bits_is_taken(bw: str, bytes_per_s: float) -> None:
    text = normal_part(SI)
    assert "BW=568MB/s (542MiB/s)" in text
    assert _read_bw(text.replace("BW=568MB/s (542MiB/s)", bw)) == pytest.approx(bytes_per_s)


def test_an_imported_run_in_bits_stores_the_bytes_a_second() -> None:
    """What `iobench import` stores and shows: the same bandwidth as the run in bytes."""
    text = normal_part(QD8)
    in_bytes = _metrics(text)
    in_bits = _metrics(text.replace("BW=1187MiB/s (1245MB/s)", "BW=9496Mibit/s (9957Mbit/s)"))
    assert in_bits["read"]["bw_bytes"] == in_bytes["read"]["bw_bytes"] == 1187 * 1024**2


def _metrics(text: str) -> dict[str, Any]:
    (result,) = interpret_fio_output(text, "x.txt").results
    assert result.metrics is not None
    return result.metrics


# -- fio 2.x: K, M, G and P --------------------------------------------------------------------


FIO2_READ = "io=23160MB,\xa0bw=23715KB/s"  # the article's first run (non-breaking spaces)


@pytest.mark.parametrize(
    ("figures", "io_bytes", "bw_bytes"),
    [
        ("io=1PB,\xa0bw=1073741KB/s", 1024**4, 1073741 * 1024),
        ("io=2PB,\xa0bw=2147483KB/s", 2 * 1024**4, 2147483 * 1024),
        ("io=22GB,\xa0bw=23MB/s", 22 * 1024**3, 23 * 1024**2),
        ("io=23715000KB,\xa0bw=1GB/s", 23_715_000 * 1024, 1024**3),
        ("io=4096B,\xa0bw=4096B/s", 4096, 4096),
    ],
)
def test_fio_2_amounts_up_to_its_p_in_powers_of_1024(
    figures: str, io_bytes: int, bw_bytes: float
) -> None:
    text = _ucloud_first_run()
    assert FIO2_READ in text
    read = _metrics(text.replace(FIO2_READ, figures))["read"]
    assert (read["io_bytes"], read["bw_bytes"]) == (io_bytes, bw_bytes)


@pytest.mark.parametrize(
    ("figures", "io_bytes", "bw_bytes"),
    [
        ("io=1PB,\xa0bw=1000000KB/s", 1000**4, 1000**3),
        ("io=3GB,\xa0bw=2MB/s", 3 * 1000**3, 2 * 1000**2),
    ],
)
def test_fio_2_amounts_with_kb_base_1000(figures: str, io_bytes: int, bw_bytes: float) -> None:
    text = _ucloud_first_run()
    line = text.splitlines()[0]
    text = text.replace(line, line + " -kb_base=1000").replace(FIO2_READ, figures)
    read = _metrics(text)["read"]
    assert (read["io_bytes"], read["bw_bytes"]) == (io_bytes, bw_bytes)


# -- what is refused, and how it is said ----------------------------------------------------------

HINT = (
    "the text looks like fio's normal output but this line is not as fio writes it; "
    "import the output as fio wrote it (or, better, fio's --output-format=json)"
)
IO_LINE = "write: IOPS=3379, BW=3380MiB/s (3544MB/s)(3383MiB/1001msec); 0 zone resets"
CLAT = "clat (usec): min=302, max=1798, avg=531.89, stdev=46.49"
PCT = "|  1.00th=[  486],  5.00th=[  498], 10.00th=[  506], 20.00th=[  515],"
FIO2_LINE = "read : io=23160MB, bw=23715KB/s, iops=5928, runt=1000001msec"


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("IOPS=3379,", "IOPS=3x79,",
         "7: a job's IO line (read/write/trim) is not as fio writes it"),
        ("IOPS=3379,", "IOPS=99999999999999999999999,",
         "7: IOPS 99999999999999999999999 is more than fio counts or measures"),
        ("IOPS=3379,", "IOPS=9999999E,", "7: IOPS 9999999E is more than fio counts or measures"),
        ("BW=3380MiB/s", "BW=99999999999EiB/s", "7: BW 99999999999Ei is more than fio measures"),
        ("(3383MiB/", "(3383EiB/", "7: io 3383EiB is not an amount fio reports"),
        ("clat (usec)", "clat (xsec)", "9: latency unit 'xsec' is not nsec, usec or msec"),
        ("avg=531.89,", "avg=99999999999999999999,",
         "9: avg 99999999999999999999 is more than fio counts or measures"),
        ("clat (usec): min=302", "clat (msec): min=302999999999999",
         "9: a latency is more than fio measures"),
        ("clat percentiles (usec)", "clat percentiles (xsec)",
         "11: percentile unit 'xsec' is not nsec, usec or msec"),
        ("1.00th=[  486]", "1.00th=[  4x6]", "12: a percentile line is not as fio writes it"),
        ("1.00th=[  486]", "101.00th=[  486]",
         "12: percentile 101.00th=[486] is not one fio reports"),
        ("1.00th=[  486]", "1.00th=[99999999999999999999]",
         "12: percentile 1.00th=[99999999999999999999] is not one fio reports"),
        ("total=0,3383,0,0", "total=0,99999999999999999999,0,0",
         "25: an issued count is more than fio counts"),
        ("  write: IOPS", "  mixed: IOPS",
         "7: 'mixed' figures (unified_rw_reporting) cannot be imported: they are not one "
         "direction's"),
        ("ios=0/6042", "ios=0/99999999999999999999", "32: a disk count is more than fio counts"),
        ("jobs=1)", "jobs=one)", "6: a job's result line is not as fio writes it"),
    ],
)  # fmt: skip
def test_a_line_fio_never_writes_is_refused_naming_file_line_and_figure(
    old: str, new: str, message: str
) -> None:
    good = (RECORDED / "text-normal-only-seqwrite.out").read_text()
    assert old in good
    text = good.replace(old, new, 1)
    lineno = int(message.split(":")[0])
    shown = text.splitlines()[lineno - 1].strip()
    with pytest.raises(UserError) as e:
        interpret_fio_output(text, "run.txt")
    assert e.value.message == f"run.txt:{message}: {shown!r}"
    assert e.value.hint == HINT


def test_a_second_line_of_one_direction_is_refused() -> None:
    good = (RECORDED / "text-normal-only-seqwrite.out").read_text()
    text = good.replace(f"  {IO_LINE}", f"  {IO_LINE}\n  {IO_LINE}", 1)
    with pytest.raises(UserError) as e:
        interpret_fio_output(text, "run.txt")
    assert e.value.message == f"run.txt:8: a second write line in one job's result: {IO_LINE!r}"


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("io=23160MB,", "io=99999999999999999999PB,",
         "8: io 99999999999999999999 is more than fio counts or measures"),
        ("io=23160MB,", "io=9000000PB,", "8: io or bw is more than fio counts or measures"),
        ("bw=23715KB/s", "bw=9000000PB/s", "8: io or bw is more than fio counts or measures"),
        ("iops=5928,", "iops=5x28,",
         "8: a job's IO line (read/write/trim) is not as fio writes it"),
        ("max=7470,", "max=9999999999999999999999K,",
         "10: max 9999999999999999999999 is more than fio counts or measures"),
    ],
)  # fmt: skip
def test_a_fio_2_line_fio_never_writes_is_refused(old: str, new: str, message: str) -> None:
    text = _ucloud_first_run()
    assert old in text.replace("\xa0", " ")
    text = text.replace("\xa0", " ").replace(old, new, 1)
    lineno = int(message.split(":")[0])
    shown = text.splitlines()[lineno - 1].strip()
    with pytest.raises(UserError) as e:
        interpret_fio_output(text, "old.txt")
    assert e.value.message == f"old.txt:{message}: {shown!r}"
    assert e.value.hint == HINT
