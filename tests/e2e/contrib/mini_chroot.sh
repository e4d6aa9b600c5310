#!/usr/bin/env bash
# A minimal chroot for Ansible's community.general.chroot connection, made in seconds (no
# debootstrap, no network): /bin/sh (dash), the coreutils the connection and Ansible's shell
# plugin run (dd for put/fetch, mkdir, rm, chmod, sleep...), python3 with its standard library (the
# modules: file, copy, command, stat, fetch), the shared libraries each of them loads, and
# /dev/null. Files are hard links when DIR is on the same file system as /usr (else copies), so
# 60 MB of Python costs nothing. After DIR: programs whose shared libraries (not the programs:
# the playbook installs those) the chroot needs; pci.ids comes along for their device names.
# Usage: tests/e2e/contrib/mini_chroot.sh DIR [PROGRAM...]
set -eu
root=$1; shift
mkdir -p "$root"/{dev,tmp,root,etc,usr/bin,usr/lib}
chmod 1777 "$root/tmp"
ln -sfn usr/bin "$root/bin"
ln -sfn usr/lib "$root/lib"
ln -sfn usr/lib "$root/lib64"
# A file into the tree at its own path (merged /usr: /lib/x and /bin/x land in usr/, /lib64/x in
# usr/lib through the lib64 link), hard-linked if possible.
put() {
  local src=$1 rel dst
  case $src in
    /lib64/*) rel=usr/lib/${src#/lib64/} ;;
    /bin/* | /lib/* | /sbin/*) rel=usr/${src#/} ;;
    *) rel=${src#/} ;;
  esac
  dst=$root/$rel
  [ -e "$dst" ] && return 0
  mkdir -p "$(dirname "$dst")"
  ln "$(readlink -f "$src")" "$dst" 2> /dev/null || cp "$(readlink -f "$src")" "$dst"
}
libs_of() { ldd "$1" 2> /dev/null | awk '/=> \//{print $3} /^\t\/[^ ]+ \(/{print $1}'; }
add_program() {
  local p=$1 lib
  put "$p"
  for lib in $(libs_of "$p"); do put "$lib"; done
}
for prog in /bin/dash /usr/bin/dd /usr/bin/mkdir /usr/bin/rm /usr/bin/chmod /usr/bin/sleep /usr/bin/cat /usr/bin/ls \
  /usr/bin/echo /usr/bin/mv /usr/bin/test; do
  add_program "$prog"
done
for prog in "$@"; do
  for lib in $(libs_of "$prog"); do put "$lib"; done
done
for ids in /usr/share/misc/pci.ids /usr/share/hwdata/pci.ids; do
  if [ -e "$ids" ]; then put "$ids"; fi
done
ln -sfn dash "$root/usr/bin/sh"
# Python: the interpreter as /usr/bin/python3, its standard library, and what its C modules load.
py=$(readlink -f /usr/bin/python3)
add_program "$py"
ln -sfn "$(basename "$py")" "$root/usr/bin/python3"
stdlib=$(/usr/bin/python3 -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')
mkdir -p "$root$stdlib"
# Another file system (EXDEV): start again with copies; never cp over links into /usr itself.
if ! cp -al "$stdlib/." "$root$stdlib/" 2> /dev/null; then
  rm -rf "$root$stdlib" && mkdir -p "$root$stdlib" && cp -a "$stdlib/." "$root$stdlib/"
fi
rm -rf "$root$stdlib/site-packages" "$root$stdlib/dist-packages"
for so in "$stdlib"/lib-dynload/*.so; do
  case $so in *_tkinter*) continue ;; esac  # Tk and X11: no module of Ansible loads it
  for lib in $(libs_of "$so"); do put "$lib"; done
done
# Best effort: without CAP_MKNOD (some CI containers) the modules still run, a shell's
# `> /dev/null` then making it a plain file.
[ -e "$root/dev/null" ] || mknod -m 666 "$root/dev/null" c 1 3 2> /dev/null || true
echo "root:x:0:0:root:/root:/bin/sh" > "$root/etc/passwd"
echo "root:x:0:" > "$root/etc/group"
