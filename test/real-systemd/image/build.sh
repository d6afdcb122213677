#!/usr/bin/env bash
# Builds (once) the root file system the real-systemd tests boot with systemd-nspawn: Debian 12 minbase with
# real systemd 252, journald, dbus, OpenSSH, python3 and tqdm, plus the SGLang stand-ins of image/files (python
# modules with SGLang's command-line shape; GPUs and SGLang itself cannot exist here). The result is cached in
# $PD_REAL_SYSTEMD_CACHE (default /var/cache/pd-console) under a name that hashes this script and image/files,
# so an edit rebuilds and an unchanged tree is reused between runs. Prints the rootfs path on its last line.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cache="${PD_REAL_SYSTEMD_CACHE:-/var/cache/pd-console}"
hash="$( (cat "$0"; cd "$here/files" && find . -type f | LC_ALL=C sort | xargs -d '\n' sha256sum) | sha256sum | cut -c1-16)"
root="$cache/real-systemd-$hash"
if [ -f "$root/.complete" ]; then echo "$root"; exit 0; fi

mkdir -p "$cache"
# One builder at a time: parallel test files may ask together.
exec 9>"$cache/.build.lock"
flock 9
if [ -f "$root/.complete" ]; then echo "$root"; exit 0; fi

tmp="$cache/.building-$hash"
rm -rf "$tmp"
started=$(date +%s)
debootstrap --variant=minbase \
  --include=systemd,systemd-sysv,dbus,openssh-server,python3,python3-tqdm,iproute2,procps,sudo \
  bookworm "$tmp" "${PD_DEBIAN_MIRROR:-http://deb.debian.org/debian}" >"$cache/.build-$hash.log" 2>&1 || {
  echo "debootstrap failed; its log: $cache/.build-$hash.log" >&2
  tail -n 20 "$cache/.build-$hash.log" >&2
  exit 1
}
cp -a "$here/files/." "$tmp/"
chroot "$tmp" /bin/sh -e <<'CHROOT'
useradd --create-home --shell /bin/bash ops
# As operators' accounts on GPU hosts usually are: allowed to read the system journal.
usermod -aG systemd-journal,adm ops
echo 'ops ALL=(ALL) NOPASSWD: ALL' > /etc/sudoers.d/ops
chmod 0440 /etc/sudoers.d/ops
# The container shares the host's network: its sshd listens on the container's own loopback address only
# (written by the fixture at each boot into sshd_config.d/pd-console.conf).
systemctl enable ssh.service >/dev/null 2>&1 || true
# Nothing the tests do needs these, and each costs boot time or writes to the shared network.
systemctl mask systemd-networkd.service systemd-resolved.service systemd-timesyncd.service \
  apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer fstrim.timer >/dev/null 2>&1 || true
# A machine id of its own, so journald keeps one journal for the container.
rm -f /etc/machine-id && systemd-machine-id-setup >/dev/null
CHROOT
echo "built in $(( $(date +%s) - started )) s" > "$tmp/.build-time"
touch "$tmp/.complete"
rm -rf "$root"
mv "$tmp" "$root"
echo "$root"
