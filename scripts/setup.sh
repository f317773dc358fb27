#!/usr/bin/env bash
# Set up everything iobench needs, idempotently: fio and Python's venv support from the OS
# packages (Debian/Ubuntu), then a virtual environment in .venv with iobench installed.
#   scripts/setup.sh         runtime only
#   scripts/setup.sh --dev   also the test tools (pytest, hypothesis, ruff, mypy) and the
#                            system tools the tests use (loop devices, mkfs incl. btrfs, sfdisk, iproute2,
#                            fio's example job files, and the network storage servers the tests
#                            start: a one-node Ceph and nbdkit, with their clients)
# Runs as root; otherwise it uses sudo for apt-get.
set -euo pipefail
cd "$(dirname "$0")/.."

dev=0
[ "${1:-}" = "--dev" ] && dev=1

sudo=""
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "setup: not root and no sudo: run this as root" >&2; exit 1; }
    sudo="sudo"
fi

packages=()
command -v fio >/dev/null || packages+=(fio)
command -v python3 >/dev/null || packages+=(python3)
if command -v python3 >/dev/null && ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
    packages+=(python3-venv)
fi
if [ "$dev" = 1 ]; then
    command -v losetup >/dev/null || packages+=(util-linux)
    command -v mkfs.ext4 >/dev/null || packages+=(e2fsprogs)
    command -v sfdisk >/dev/null || packages+=(fdisk)
    command -v ip >/dev/null || packages+=(iproute2)
    command -v pvcreate >/dev/null || packages+=(lvm2)
    command -v cryptsetup >/dev/null || packages+=(cryptsetup-bin)
    command -v mkfs.btrfs >/dev/null || packages+=(btrfs-progs)
    # fio's own example job files, which the tests read as suites (tests/test_suites_jobfile.py).
    [ -f /usr/share/doc/fio/examples/ssd-test.fio ] || packages+=(fio-examples)
    # The HTML report is opened in headless Chromium by the tests (Debian's package; on
    # Ubuntu it is a snap that does not run in containers, and those tests then skip).
    command -v chromium >/dev/null || packages+=(chromium)
    # Real network storage started by the tests (tests/netstore.py): a one-node Ceph (no
    # daemon starts on install, no /etc/ceph is written) and nbdkit, with their clients.
    command -v ceph-mon >/dev/null || packages+=(ceph-mon)
    command -v ceph-mgr >/dev/null || packages+=(ceph-mgr)
    command -v ceph-osd >/dev/null || packages+=(ceph-osd)
    command -v rbd >/dev/null || packages+=(ceph-common)
    command -v nbdkit >/dev/null || packages+=(nbdkit)
    command -v nbdinfo >/dev/null || packages+=(libnbd-bin)
    command -v pgrep >/dev/null || packages+=(procps)
fi
if [ "${#packages[@]}" -gt 0 ]; then
    echo "setup: installing OS packages: ${packages[*]}"
    $sudo apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${packages[@]}" >/dev/null
fi
# python3-venv may only now be installable (python3 was missing above).
if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
fi
python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' || {
    echo "setup: iobench needs Python >= 3.11 (Debian 12, Ubuntu 24.04 or newer); found $(python3 --version)" >&2
    exit 1
}

[ -x .venv/bin/python ] || python3 -m venv .venv
extras=""
[ "$dev" = 1 ] && extras="[dev]"
stamp=".venv/.iobench-installed"
want="$(sha256sum pyproject.toml | cut -c1-16)$extras"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ] || ! .venv/bin/python -c 'import iobench' 2>/dev/null; then
    echo "setup: installing iobench$extras into .venv"
    .venv/bin/python -m pip install -q --disable-pip-version-check -e ".$extras"
    echo "$want" > "$stamp"
fi
echo "setup: ready ($(fio --version), $(.venv/bin/python --version), .venv/bin/iobench)"
